"""The read side: stored runs, the rows that count, their statistics and the cost model."""
