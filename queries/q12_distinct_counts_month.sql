-- purpose: unique visitors and pages of a month
-- exercises: exact distinct counts over nested fields
-- window: 30d
SELECT count(DISTINCT endUserIDs._experience.mcid.id) AS visitors,
       count(DISTINCT web.webPageDetails.name) AS pages
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
