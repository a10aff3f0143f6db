-- DuckDB's reading of ../q15_viewport_percentiles_week.sql: quantile_cont is Spark's exact,
-- interpolating percentile
SELECT device.type AS device_type,
       quantile_cont(environment.browserDetails.viewportWidth, 0.5) AS p50,
       quantile_cont(environment.browserDetails.viewportWidth, 0.9) AS p90
FROM {source}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND "date" BETWEEN DATE '{date_from}' AND DATE '{date_to}'
GROUP BY device.type
