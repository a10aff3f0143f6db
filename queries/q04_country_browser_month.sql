-- purpose: traffic by country and browser over a month
-- exercises: group-by on two nested struct fields three levels deep (nested schema pruning)
-- window: 30d
SELECT environment.geo.countryCode AS country, environment.browserDetails.name AS browser,
       count(*) AS events
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
GROUP BY environment.geo.countryCode, environment.browserDetails.name
