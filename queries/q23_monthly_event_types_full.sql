-- purpose: events per month and type over the whole table
-- exercises: a full-table aggregation on top-level primitives (partition column and eventType)
-- window: full
SELECT year(`date`) AS year, month(`date`) AS month, eventType, count(*) AS events
FROM {table}
GROUP BY year(`date`), month(`date`), eventType
