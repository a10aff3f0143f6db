-- purpose: order revenue by currency and payment type over a month
-- exercises: filter on a nested struct that is mostly null (commerce.order), sums of nested doubles
-- window: 30d
SELECT commerce.order.currencyCode AS currency, commerce.order.paymentType AS payment,
       count(*) AS orders, round(sum(commerce.order.priceTotal), 2) AS revenue
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND commerce.order.priceTotal IS NOT NULL
GROUP BY commerce.order.currencyCode, commerce.order.paymentType
