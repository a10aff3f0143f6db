-- purpose: campaign traffic by channel over a quarter
-- exercises: a wide window (90 days) grouped on nested fields of an optional struct
-- window: 90d
SELECT marketing.channel.name AS channel, marketing.channel.type AS channel_type,
       count(*) AS events, count(DISTINCT marketing.trackingCode) AS campaigns
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND marketing IS NOT NULL
GROUP BY marketing.channel.name, marketing.channel.type
