"""A granted module whose function ends the process, as a parser's error does
(``argparse``, ``optparse``: both never grantable, so the guard's conversion is tested here)."""

from __future__ import annotations

import sys


def give_up(code: int) -> None:
    """What ``ArgumentParser.error`` does."""

    sys.exit(code)
