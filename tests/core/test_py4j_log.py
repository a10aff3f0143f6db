"""py4j's records, tracebacks included, reach the Spark log file and never the console."""

from __future__ import annotations

import io
import logging
import sys

from icelab.core import py4j_log, run_state


def test_py4j_retry_tracebacks_go_to_the_spark_log_not_the_console(tmp_path, monkeypatch):
    monkeypatch.setattr(run_state, "spark_log", tmp_path / "spark.log")
    root = logging.getLogger()
    console = logging.StreamHandler(io.StringIO())  # as Hydra's job logging has it, at INFO
    saved = root.handlers[:], root.level
    root.handlers[:] = [console]
    root.setLevel(logging.INFO)
    try:
        py4j_log.keep_off_console()
        py4j_log.keep_off_console()  # a multirun's next job: no second file handler
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except ConnectionResetError:
            # What py4j's send_command logs before sending again (py4j/java_gateway.py).
            record = root.makeRecord(
                "root",
                logging.INFO,
                "/x/site-packages/py4j/java_gateway.py",
                1056,
                "Exception while sending command.",
                (),
                sys.exc_info(),
            )
        root.handle(record)
        logging.getLogger("icelab.test").info("an icelab line")
        for handler in root.handlers:
            handler.flush()
        said = console.stream.getvalue()
        assert "an icelab line" in said and "Traceback" not in said and "sending command" not in said
        kept = (tmp_path / "spark.log").read_text()
        assert "Exception while sending command." in kept and "ConnectionResetError" in kept
        assert "an icelab line" not in kept
        assert sum(py4j_log.ONLY in h.filters for h in root.handlers) == 1
    finally:
        for handler in root.handlers:
            if handler is not console:
                handler.close()
        root.handlers[:], _ = saved
        root.setLevel(saved[1])
