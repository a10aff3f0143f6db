-- purpose: of the visitors who viewed a product in a day, how many also bought
-- exercises: a self-join of the table (two scans of the same window), distinct on a nested id
-- window: 1d
WITH viewers AS (
  SELECT DISTINCT endUserIDs._experience.mcid.id AS visitor
  FROM {table}
  WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
    AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
    AND eventType = 'commerce.productViews'
), buyers AS (
  SELECT DISTINCT endUserIDs._experience.mcid.id AS visitor
  FROM {table}
  WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
    AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
    AND eventType = 'commerce.purchases'
)
SELECT count(*) AS viewers, count(buyers.visitor) AS converted
FROM viewers LEFT JOIN buyers ON viewers.visitor = buyers.visitor
