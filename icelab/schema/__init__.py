"""The schema-change checker: a table model, the rules Iceberg applies, and changes files."""
