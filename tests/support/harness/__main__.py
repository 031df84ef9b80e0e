"""``python -m tests.support.harness ensure|up|capture``: the command line of ``cli.py``."""

import sys

from tests.support.harness.cli import main

sys.exit(main())
