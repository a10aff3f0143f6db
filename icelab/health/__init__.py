"""Manifest health on any Iceberg table: the library behind `icelab doctor` (and the shared
policy of `experiment=manifest_health`).

    source.py    which table, and how the session reaches it (Hadoop path, metadata.json, Hive, REST)
    reader.py    its metadata through Spark's Iceberg metadata tables (no data read), timed
    spec.py      partition fields of any spec: values and manifest bounds in one comparable form
    broken.py    a missing or unreadable metadata file, manifest list or manifest: its own outcome
    check.py     manifests per partition (exact, bounds), statistics, verdict, files, deletes, snapshots
    deletes.py   delete files by kind (position, deletion vectors, equality) and the calls that clear them
    orphans.py   manifests and manifest lists no snapshot references, and remove_orphan_files
    finding.py   a note with the SQL to review, for deletes and orphans
    policy.py    the verdict: statistics against manifest_health's rules
    forecast.py  planning per window predicted by the cost model (icelab.analysis), fitted once per run
    rewrite.py   the layout rewrite_manifests would leave, simulated on the table's own entries
    gain.py      whether that rewrite is worth running: the verdict, and why in one line
    advice.py    target size and its floor, clustering, predictions, the exact statements, and running them
    commits.py   the commits other writers made while --apply ran, and the doctor's own
    diagnosis.py the whole visit and its files
    console.py   the visit's console report
    history.py   the commits a table's live entries and snapshots keep, in history order
    ingest_model.py how the table ingests, fitted from those commits (a maintenance plan's first part)
"""
