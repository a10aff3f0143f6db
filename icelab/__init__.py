"""icelab: shared infrastructure (config checks, Spark session, storage, provenance)."""
