"""Start-up of ``os-sandbox=bwrap`` and ``os-sandbox=unshare``, with and without ``net=`` rules,
next to ``os-sandbox=subprocess`` and plain python3.

- Without ``net=`` rules (loopback only, nothing started): bubblewrap builds the mount tree, or
  the unshare setup step (one bare interpreter) does. Target (issue 7): <= 25 ms over
  ``subprocess``.
- With a ``net=`` rule: the holder namespace with its nftables ruleset and pasta are started
  first and python-sb stays as the supervising parent. Target: <= 150 ms over ``subprocess``.

The Python layer is off (``--py-sandbox=false``) so the guard's own cost does not hide the
provider's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cases import PYTHON_SB, CommandCase

NET_RULE = "--net=ALLOW|TCP|127.0.0.1|5432|OUT"


def setup(workdir: Path) -> None:
    (workdir / ".py-sandboxes").write_text(f"expose-ro={workdir}\n")


def _command(provider: str, *extra: str) -> Callable[[Path], list[str]]:
    return lambda w: [
        PYTHON_SB,
        "--py-sandbox=false",
        f"--os-sandbox={provider}",
        *extra,
        str(w / "hello.py"),
    ]


SUBPROCESS = _command("subprocess")

CASES: list[Any] = [
    CommandCase("subprocess vs python3", SUBPROCESS),
    CommandCase("bwrap vs python3", _command("bwrap")),
    CommandCase("unshare vs python3", _command("unshare")),
    CommandCase(
        "bwrap vs subprocess (no net= rule)", _command("bwrap"), SUBPROCESS, target_ms_over=25
    ),
    CommandCase(
        "unshare vs subprocess (no net= rule)", _command("unshare"), SUBPROCESS, target_ms_over=25
    ),
    CommandCase(
        "bwrap vs subprocess (net= rule: pasta + nftables)",
        _command("bwrap", NET_RULE),
        SUBPROCESS,
        target_ms_over=150,
    ),
    CommandCase(
        "unshare vs subprocess (net= rule: pasta + nftables)",
        _command("unshare", NET_RULE),
        SUBPROCESS,
        target_ms_over=150,
    ),
]
