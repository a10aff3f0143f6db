"""`python -m icelab.tools.docs`: the same as `icelab docs`."""

import sys

from icelab.tools.docs import main

sys.exit(main())
