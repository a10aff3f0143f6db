"""The read side: stored runs and the numbers computed from them, owned in one place.

Above `icelab.bench` (which measures and writes) and below `icelab.charts`, the docs and the
commands (which draw and print what is computed here); it never starts Spark.

    stored_run        one stored run's measurements and derived tables, read once while unchanged
    rows              the rows that count (measured rounds that succeeded)
    stats             medians, spreads, growth ratios and geometric means of a run
    effect_intervals  bootstrap intervals of ratios and whether an effect recurs
    comparison        two sides compared cell by cell: test, verdict, effect
    claims            a typed verdict checked against the figures (`require`, `ClaimError`)
    planning_cases    one planning run read case by case: windows, variants, medians, growth
    planning_figures  the figures of docs/planning.md's tables and notes
    planning_claims   the figures behind docs/planning.md's claims, each verdict checked
    store_runs        which runs set the object store beside local disk, and where each ran
    store_figures     the figures of docs/object-store.md: planning and S3 requests per place
    planning_cells    the planning cost model's cells (median planning and features per cell)
    planning_model    the cost model: fit, prediction, holdout check, repeat spread
    manifest_layouts  a table described by its size: layouts, what a window reads, prediction
    planning_runs     the stored runs the cost model is fitted on and checked against
    canonical_run     a canonical run with the figures the experiment computes, and their lookups
    canonical_plan    what its plans show: leaf fields, plan facts, pushdown, vectorized queries
    canonical_protocol  how it measured: setups, protocol, rounds, answers, its run's facts
    canonical_versus  its setups against Parquet and initial, per query, and the page's reading
    canonical_claims  which of the study's claims it reproduces, as the figures that decide each
    effect_checks     stored effect checks (A against A, planted slowdowns, real settings) counted
    stored_comparisons  stored `icelab compare` tables: what can be flagged, what one setting did
    model_checks      the cost model checked on stored runs: holdout, the one-sitting set, repeat spread
    dataset_reads     what stored runs show of a dataset's tables and of where a run's time went
    table_upkeep      manifest health before and after a rewrite, snapshot expiry's timeline
    doctor_reports    stored doctor runs: against manifest_health's states, time to a report
    schema_records    what a schema_evolution run's records show: field ids, rejections, hazards
    scale_states      a metadata_scale run's figures: states, cells, planning modes, anchors
    fault_runs        the stored fault runs: what each injected fault did to its run
    shape_catalogue   a stored doctor_catalogue run: per table shape, verdict, action, before and after
"""
