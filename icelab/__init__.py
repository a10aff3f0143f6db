"""icelab: Iceberg vs Parquet layout and maintenance experiments on Spark.

Layers, each importing only the ones below it (tests/test_layers.py enforces the order):

    icelab.tools        commands users run on results and tables (`icelab <verb>`)
    icelab.experiments  one module per experiment task (conf/experiment/*.yaml `task:`)
    icelab.charts       charts and the HTML report, from stored results only
    icelab.analysis     the read side: stored runs, the rows that count, statistics, the cost model
    icelab.bench        the measuring core shared by experiments (measure, protocol, recorder, ...)
    icelab.datagen      the dataset: generate, ingest as commits, verify, cache
    icelab.schema       the schema-change checker's model and rules (pure Python)
    icelab.core         ground: config, Spark session, storage, locks, run state, results, provenance
"""
