"""`python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d`: the issue's spelling of
`icelab costmodel ...` (icelab.tools.costmodel): the planning cost model, fitted on stored runs."""

from __future__ import annotations

import sys

from icelab.tools.costmodel import main

if __name__ == "__main__":
    sys.exit(main())
