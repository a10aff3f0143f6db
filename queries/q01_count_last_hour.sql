-- purpose: how many events arrived in the last hour (a dashboard's freshness tile)
-- exercises: the narrowest window; partition pruning; no column read beyond the filter
-- window: 1h
SELECT count(*) AS events
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
