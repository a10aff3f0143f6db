-- purpose: count events in a time window, filtering the event timestamp only
-- exercises: Iceberg's hidden partitioning (days(timestamp) prunes without a partition column) and
--   aggregate push-down (a day-aligned window is answered from manifests); Parquet cannot prune
--   without its `date` partition column, so it lists and reads every partition
-- window: any; parameters: {table} {ts_from} {ts_to}
SELECT count(*) AS events
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
