-- purpose: the week's commerce funnel: product views, cart adds, checkouts, purchases
-- exercises: sums of nested struct measures (commerce.*.value) over a nested not-null filter
-- window: 7d
SELECT sum(commerce.productViews.value) AS product_views,
       sum(commerce.productListAdds.value) AS cart_adds,
       sum(commerce.checkouts.value) AS checkouts,
       sum(commerce.purchases.value) AS purchases
FROM {table}
WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
  AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND commerce IS NOT NULL
