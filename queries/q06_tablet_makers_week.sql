-- purpose: which manufacturers' tablets visited in the last week
-- exercises: filter and group-by on nested struct fields (device.type, device.manufacturer)
-- window: 7d
SELECT device.manufacturer AS manufacturer, count(*) AS events,
       count(DISTINCT device.model) AS models
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND device.type = 'Tablet'
GROUP BY device.manufacturer
