-- purpose: every field of the last hour's events (an export)
-- exercises: the widest projection (all 15 columns, ~80 leaves, maps and arrays); no pruning possible
-- window: 1h
SELECT _id, timestamp, eventType, producedBy, web, environment, device, commerce, marketing,
       endUserIDs, search, placeContext, customAttributes, productListItems, identityMap, `date`
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
