-- purpose: count events in a time window (the study's planning-time probe)
-- exercises: partition pruning (Parquet: date= directories; Iceberg: days(timestamp) via manifests)
-- window: any; parameters: {table} {ts_from} {ts_to} {date_from} {date_to}
SELECT count(*) AS events
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
