"""py4j's own log records stay off the console: they go to the process's Spark log file.

When the connection between Python and the driver JVM breaks (a JVM thread interrupted by the
store guard, a JVM that ended), py4j sends the command again and logs the broken attempt with
its traceback: at INFO through the root logger (`logging.info(..., exc_info=True)` in
`py4j.java_gateway`), which Hydra's console handler prints. icelab says what happened in one
line; the traceback is kept in `run_state.spark_log`, copied into the run's `spark.log`.
"""

from __future__ import annotations

import logging
import os

from icelab.core import run_state

_PY4J_DIR = f"{os.sep}py4j{os.sep}"


def from_py4j(record: logging.LogRecord) -> bool:
    """Whether py4j logged `record` (by its logger, or from its code through the root logger)."""
    return record.name.startswith("py4j") or _PY4J_DIR in record.pathname


class _Off(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not from_py4j(record)


class _Only(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return from_py4j(record)


OFF, ONLY = _Off(), _Only()


def keep_off_console() -> None:
    """Filter py4j's records out of every console handler of the root logger, and send them to the
    Spark log file instead. Called once logging is set up (Hydra sets it up per job); idempotent.
    Where the root logger has no handler (the `icelab` verbs), one to stderr at WARNING stands in
    for logging's last resort, with py4j's records filtered out."""
    root = logging.getLogger()
    if not root.handlers:
        console = logging.StreamHandler()
        console.setLevel(logging.WARNING)
        root.addHandler(console)
    for handler in root.handlers:
        console = isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler)
        if console and OFF not in handler.filters:
            handler.addFilter(OFF)
    if not any(ONLY in h.filters for h in root.handlers):
        run_state.spark_log.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Appending (O_APPEND): the JVM writes the same file, and a rotation may truncate it.
        kept = logging.FileHandler(run_state.spark_log, mode="a", delay=True)
        kept.addFilter(ONLY)
        kept.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s (python): %(message)s"))
        root.addHandler(kept)
