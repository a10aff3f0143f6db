"""icelab entry point.

python run.py experiment=datagen dataset=small
python run.py -m experiment=datagen dataset=tiny,small
"""

import logging
import sys

import hydra
from omegaconf import DictConfig

from icelab.cli import check_choices, one_line_errors


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    """Run the experiment the composed config names."""
    from experiments.runner import run_experiment

    with one_line_errors():
        run_experiment(cfg)


if __name__ == "__main__":
    logging.getLogger("py4j").setLevel(logging.WARNING)
    with one_line_errors():
        check_choices(sys.argv[1:])
    main()
