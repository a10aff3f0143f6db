-- purpose: keywords of deep searches over a month
-- exercises: a range filter on a nested integer (search.pageDepth) pushed to the scan, group-by
-- window: 30d
SELECT search.keywords AS keywords, count(*) AS searches
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND search.pageDepth >= 3
GROUP BY search.keywords
