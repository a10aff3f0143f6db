"""Synthetic XDM-like event data: generation, ingestion as commits, verification, caching."""
