"""``python -m tdsl``: the command line."""

import sys

from .cli import main

sys.exit(main())
