"""Named points where the kill tests stop the process with SIGKILL, as a crash would.

`ICELAB_KILL_AT=<point>[:<nth>][+<seconds>]` kills the process at the nth time (default the
first) it reaches `<point>`, or that many seconds later while it carries on, which lands the
kill inside whatever follows (an Iceberg commit, a Spark write). Unset, a point costs one
dictionary lookup. Nothing is cleaned up or flushed: that is the point.
"""

from __future__ import annotations

import os
import re
import signal
import threading
from collections import Counter

ENV = "ICELAB_KILL_AT"
_SPEC = re.compile(r"(?P<name>[\w.]+)(?::(?P<nth>\d+))?(?:\+(?P<delay>\d+(?:\.\d+)?))?")
_hits: Counter[str] = Counter()


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def point(name: str) -> None:
    """Reach the point `name`; dies here (or a little later) when the environment asks for it."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    match = _SPEC.fullmatch(spec)
    if match is None or match["name"] != name:
        return
    _hits[name] += 1
    if _hits[name] != int(match["nth"] or 1):
        return
    if match["delay"]:
        timer = threading.Timer(float(match["delay"]), _kill)
        timer.daemon = True
        timer.start()
    else:
        _kill()
