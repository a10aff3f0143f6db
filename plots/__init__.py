"""Charts from stored results only: nothing here starts Spark or reads the data."""
