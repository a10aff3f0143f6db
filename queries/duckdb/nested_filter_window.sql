-- DuckDB's reading of ../nested_filter_window.sql over the Parquet files
SELECT _id, web.webPageDetails.name AS page
FROM {source}
WHERE timestamp >= TIMESTAMPTZ '{ts_from}+00' AND timestamp < TIMESTAMPTZ '{ts_to}+00'
  AND "date" BETWEEN DATE '{date_from}' AND DATE '{date_to}'
  AND environment.geo.countryCode = 'DE'
