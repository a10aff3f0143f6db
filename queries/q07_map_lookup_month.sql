-- purpose: loyalty tiers seen over a month
-- exercises: map lookup by key (customAttributes['loyalty_tier']), grouping on the looked-up value
-- window: 30d
SELECT customAttributes['loyalty_tier'] AS tier, count(*) AS events
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND customAttributes['loyalty_tier'] IS NOT NULL
GROUP BY customAttributes['loyalty_tier']
