-- DuckDB's reading of ../count_window.sql over the Parquet files (an independent engine and reader)
SELECT count(*) AS events
FROM {source}
WHERE timestamp >= TIMESTAMPTZ '{ts_from}+00' AND timestamp < TIMESTAMPTZ '{ts_to}+00'
  AND "date" BETWEEN DATE '{date_from}' AND DATE '{date_to}'
