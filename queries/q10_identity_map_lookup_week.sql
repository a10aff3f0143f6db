-- purpose: every event of a handful of known customers, found by e-mail identity
-- exercises: the map of arrays (identityMap['Email']), a predicate over array elements
-- window: 7d
SELECT identityMap['Email'][0].id AS email, count(*) AS events
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND exists(identityMap['Email'], x -> x.id IN ('user0@example.com', 'user3@example.com',
      'user5@example.com', 'user8@example.com', 'user13@example.com', 'user21@example.com'))
GROUP BY identityMap['Email'][0].id
