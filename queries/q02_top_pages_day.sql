-- purpose: the ten most viewed pages of a day
-- exercises: top-N over a nested struct field (web.webPageDetails), nested filter on a measure
-- window: 1d
SELECT web.webPageDetails.name AS page, count(*) AS views
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND web.webPageDetails.pageViews.value > 0
GROUP BY web.webPageDetails.name
ORDER BY views DESC, page
LIMIT 10
