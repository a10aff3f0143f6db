"""`python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d`: `icelab costmodel ...`
(icelab.tools.costmodel) without the console script, the spelling docs/costmodel.md prints."""

from __future__ import annotations

import sys

from icelab.tools.costmodel import main

if __name__ == "__main__":
    sys.exit(main())
