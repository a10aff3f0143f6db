-- purpose: the events of one country in a day, two fields each
-- exercises: a selective filter on a nested field (predicate pushdown) with a narrow nested projection
-- window: 1d
SELECT _id, web.webPageDetails.name AS page
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND environment.geo.countryCode = 'DE'
