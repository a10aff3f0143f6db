"""Experiments: each module has `run(cfg)` and a config in conf/experiment/."""
