-- purpose: event mix of the last week
-- exercises: group-by on a top-level primitive column (the vectorized reader's best case)
-- window: 7d
SELECT eventType, count(*) AS events
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
GROUP BY eventType
