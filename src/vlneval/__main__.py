"""``python -m vlneval``."""

import sys

from vlneval.cli.main import main

sys.exit(main())
