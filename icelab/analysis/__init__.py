"""The read side: stored runs and the numbers computed from them, owned in one place.

Above `icelab.bench` (which measures and writes) and below `icelab.charts`, the docs and the
commands (which draw and print what is computed here); it never starts Spark.

    stored_run        one stored run's measurements and derived tables, read once while unchanged
    rows              the rows that count (measured rounds that succeeded)
    stats             medians, spreads, growth ratios and geometric means of a run
    effect_intervals  bootstrap intervals of ratios and whether an effect recurs
    comparison        two sides compared cell by cell: test, verdict, effect
    planning_cells    the planning cost model's cells (median planning and features per cell)
    planning_model    the cost model: fit, prediction, holdout check, repeat spread
    manifest_layouts  a table described by its size: layouts, what a window reads, prediction
    planning_runs     the stored runs the cost model is fitted on and checked against
    model_checks      the cost model checked on stored runs: holdout, the one-sitting set, repeat spread
    dataset_reads     what stored runs show of a dataset's tables and of where a run's time went
    table_upkeep      manifest health before and after a rewrite, snapshot expiry's timeline
    doctor_reports    stored doctor runs: against manifest_health's states, time to a report
    schema_records    what a schema_evolution run's records show: field ids, rejections, hazards
    scale_states      a metadata_scale run's figures: states, cells, planning modes, anchors
"""
