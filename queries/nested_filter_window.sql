-- purpose: a narrow projection with a filter on a nested field, over a time window
-- exercises: nested schema pruning and predicate pushdown (environment.geo.countryCode)
-- window: any; parameters: {table} {ts_from} {ts_to} {date_from} {date_to}
SELECT _id, web.webPageDetails.name AS page
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND environment.geo.countryCode = 'DE'
