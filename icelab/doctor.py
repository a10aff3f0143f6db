"""`python -m icelab.doctor TABLE`: the issue's spelling of `icelab doctor TABLE`
(icelab.tools.doctor; docs/doctor.md)."""

from __future__ import annotations

import sys

from icelab.tools.doctor import main

if __name__ == "__main__":
    sys.exit(main())
