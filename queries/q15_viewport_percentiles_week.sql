-- purpose: viewport widths by device type: median and 90th percentile of a week
-- exercises: exact percentiles over a nested integer field, grouped by another nested field
-- window: 7d
SELECT device.type AS device_type,
       percentile(environment.browserDetails.viewportWidth, 0.5) AS p50,
       percentile(environment.browserDetails.viewportWidth, 0.9) AS p90
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
GROUP BY device.type
