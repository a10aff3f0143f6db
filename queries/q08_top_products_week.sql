-- purpose: the twenty products added most often in a week, by quantity
-- exercises: array explode (productListItems), aggregation over struct fields of array elements
-- window: 7d
SELECT item.SKU AS sku, sum(item.quantity) AS quantity, count(*) AS lines
FROM (
  SELECT explode(productListItems) AS item
  FROM {table}
  WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
    AND `date` BETWEEN DATE '{date_from}' AND DATE '{date_to}'
    AND productListItems IS NOT NULL
) AS items
GROUP BY item.SKU
ORDER BY quantity DESC, sku
LIMIT 20
