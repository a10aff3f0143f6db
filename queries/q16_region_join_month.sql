-- purpose: events and visitors per sales region over a month
-- exercises: a join with a small dimension (country -> region), group-by on the dimension
-- window: 30d
SELECT dim.region AS region, count(*) AS events,
       count(DISTINCT e.endUserIDs._experience.mcid.id) AS visitors
FROM {table} AS e
JOIN (VALUES ('US', 'Americas'), ('CA', 'Americas'), ('BR', 'Americas'), ('MX', 'Americas'),
             ('GB', 'EMEA'), ('DE', 'EMEA'), ('FR', 'EMEA'), ('ES', 'EMEA'), ('IT', 'EMEA'),
             ('NL', 'EMEA'), ('SE', 'EMEA'), ('IN', 'APAC'), ('JP', 'APAC'), ('AU', 'APAC'),
             ('KR', 'APAC')) AS dim(code, region)
  ON e.environment.geo.countryCode = dim.code
WHERE e.timestamp >= TIMESTAMP '{ts_from}' AND e.timestamp < TIMESTAMP '{ts_to}'
  AND e.`date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
GROUP BY dim.region
