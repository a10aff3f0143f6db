-- DuckDB's reading of ../q08_top_products_week.sql: unnest instead of explode
SELECT item.SKU AS sku, sum(item.quantity) AS quantity, count(*) AS lines
FROM (
  SELECT unnest(productListItems) AS item
  FROM {source}
  WHERE timestamp >= TIMESTAMP '{ts_from}' AND timestamp < TIMESTAMP '{ts_to}'
    AND "date" BETWEEN DATE '{date_from}' AND DATE '{date_to}'
    AND productListItems IS NOT NULL
) AS items
GROUP BY item.SKU
ORDER BY quantity DESC, sku
LIMIT 20
