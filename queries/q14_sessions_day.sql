-- purpose: visits of a day: a new session after 30 minutes without an event
-- exercises: sessionization with a window function (lag over visitor, ordered by time)
-- window: 1d
WITH events AS (
  SELECT endUserIDs._experience.mcid.id AS visitor, timestamp, _id
  FROM {table}
  WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
    AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
), marked AS (
  SELECT visitor,
         CASE WHEN lag(timestamp) OVER (PARTITION BY visitor ORDER BY timestamp, _id) IS NULL
                OR timestamp > lag(timestamp) OVER (PARTITION BY visitor ORDER BY timestamp, _id)
                               + INTERVAL 30 MINUTES
              THEN 1 ELSE 0 END AS new_session
  FROM events
)
SELECT count(DISTINCT visitor) AS visitors, sum(new_session) AS sessions, count(*) AS events
FROM marked
