-- DuckDB's reading of ../q10_identity_map_lookup_week.sql: 1-based arrays, list_filter for exists
SELECT identityMap['Email'][1].id AS email, count(*) AS events
FROM {source}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND "date" BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND len(list_filter(identityMap['Email'], lambda x: x.id IN ('user0@example.com',
      'user3@example.com', 'user5@example.com', 'user8@example.com', 'user13@example.com',
      'user21@example.com'))) > 0
GROUP BY identityMap['Email'][1].id
