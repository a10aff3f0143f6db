-- purpose: ids, times and types of the last hour's events (q18's rows, three top-level fields)
-- exercises: the narrowest projection, primitives only (vectorized reads apply)
-- window: 1h
SELECT _id, timestamp, eventType
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
