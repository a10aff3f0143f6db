"""icelab entry point.

python run.py experiment=datagen dataset=small
python run.py experiment=manifest_8mb dataset=medium
python run.py -m experiment=manifest_8mb dataset=small,medium
"""

import logging
import sys

import hydra
from omegaconf import DictConfig

from icelab.core.cli import check_choices, check_overrides, one_line_errors


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    """Run the experiment the composed config names."""
    from icelab.core.py4j_log import keep_off_console
    from icelab.experiments.runner import run_experiment

    keep_off_console()  # after Hydra set up this job's logging
    try:
        with one_line_errors():
            run_experiment(cfg)
    finally:
        # One Spark session per experiment, also when a multirun runs several in one process;
        # then the standalone cluster icelab started for it (engine=standalone) and the object
        # store it used (storage=object), so no server outlives the run.
        from pyspark.sql import SparkSession

        from icelab.core import cluster, object_store
        from icelab.core.jvm import jvm_running

        # Not when a measurement past its timeout ended the JVM (there is nothing to stop).
        active = SparkSession.getActiveSession() if jvm_running() else None
        if active is not None:
            active.stop()
        cluster.stop()
        object_store.close()


if __name__ == "__main__":
    logging.getLogger("py4j").setLevel(logging.WARNING)
    with one_line_errors():
        check_choices(sys.argv[1:])
        check_overrides(sys.argv[1:])
    try:
        main()
    finally:
        # Last, on every exit path: the driver JVM goes with this process, even one that no
        # longer answers (a multirun's jobs share it, so it is stopped here, not per job).
        from icelab.core.jvm import stop_jvm

        stop_jvm()
