"""``python -m vlneval``."""

from vlneval.cli.main import console

console()
