"""Run Spark SQL from stdin in icelab's Spark session, with one Hadoop catalog of Iceberg tables.

python -m icelab.tools.spark_sql CATALOG WAREHOUSE < statements.sql

For a table to try the doctor on (docs/tutorial-doctor.md): plain Spark SQL, the session's
engine settings (`conf/engine/`, local by default) and no icelab code between the SQL and Iceberg.
Statements are separated by `;`. Each runs in order; the first that fails stops the run with one
line on stderr (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def statements(text: str) -> list[str]:
    """The `;`-separated statements of `text`, blank ones dropped."""
    return [s.strip() for s in text.split(";") if s.strip()]


def main(argv: list[str] | None = None) -> int:
    """Command line: the catalog's name and warehouse directory; the SQL on stdin."""
    parser = argparse.ArgumentParser(
        prog="python -m icelab.tools.spark_sql", description=__doc__.split("\n")[0]
    )
    parser.add_argument("catalog", help="the catalog's name in the SQL, e.g. demo")
    parser.add_argument("warehouse", type=Path, help="the Hadoop catalog's warehouse directory")
    args = parser.parse_args(argv)
    sql = statements(sys.stdin.read())
    if not sql:
        parser.error("no SQL on stdin")

    from hydra import compose, initialize_config_dir
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    from icelab.core import storage
    from icelab.core.cli import CONF_DIR
    from icelab.core.config import engine_config
    from icelab.core.errors import UserError
    from icelab.core.session import get_session, register_iceberg_catalog

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        engine = engine_config(compose(config_name="config"))
    try:
        spark = get_session(engine)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    args.warehouse.mkdir(parents=True, exist_ok=True)
    register_iceberg_catalog(spark, args.catalog, storage.to_uri(str(args.warehouse.resolve())), engine)
    try:
        for n, statement in enumerate(sql, 1):
            spark.sql(statement).collect()
            print(f"{n}/{len(sql)}: {' '.join(statement.split())[:60]}", flush=True)
    except (PySparkException, Py4JJavaError) as exc:
        first = str(exc).strip().splitlines()[0]
        print(f"icelab: error: statement {n}: {first}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
