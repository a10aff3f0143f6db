"""Metadata-only Iceberg table states at production file counts (docs/metadata-scale.md)."""
