-- purpose: GDPR access request: every event of a set of users, over the whole table
-- exercises: a full-table scan with a nested IN filter (no partition predicate: every manifest is read)
-- window: full
SELECT _id, timestamp, eventType
FROM {table}
WHERE endUserIDs._experience.mcid.id IN ('ecid-000000007', 'ecid-000000042', 'ecid-000000123',
                                         'ecid-000001234', 'ecid-000012345')
