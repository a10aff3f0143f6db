-- purpose: daily active users over a month
-- exercises: a wide-window aggregation, distinct per partition day
-- window: 30d
SELECT `date` AS day, count(DISTINCT endUserIDs._experience.mcid.id) AS visitors
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
GROUP BY `date`
