"""The read side: stored runs and the numbers computed from them, owned in one place.

Above `icelab.bench` (which measures and writes) and below `icelab.charts`, the docs and the
commands (which draw and print what is computed here); it never starts Spark.

    rows              the rows that count (measured rounds that succeeded)
    stats             medians, spreads, growth ratios and geometric means of a run
    effect_intervals  bootstrap intervals of ratios and whether an effect recurs
"""
