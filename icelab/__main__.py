"""`python -m icelab <verb>`: the same as the `icelab` console script."""

import sys

from icelab.tools.main import main

sys.exit(main())
