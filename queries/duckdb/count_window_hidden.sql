-- DuckDB's reading of ../count_window_hidden.sql over the Parquet files
SELECT count(*) AS events
FROM {source}
WHERE timestamp >= TIMESTAMPTZ '{ts_from}+00' AND timestamp < TIMESTAMPTZ '{ts_to}+00'
