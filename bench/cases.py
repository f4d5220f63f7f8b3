"""The benchmark case types shared by ``bench/run.py`` and every ``bench/bench_*.py`` module."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PYTHON3 = os.environ.get("BENCH_PYTHON3", sys.executable)
PYTHON_SB = str(Path(sys.executable).with_name("python-sb"))


@dataclass
class CommandCase:
    """Time ``command`` against ``baseline`` (both argv lists, run in ``workdir``)."""

    name: str
    command: Callable[[Path], list[str]]
    baseline: Callable[[Path], list[str]] = field(
        default_factory=lambda: lambda w: [PYTHON3, str(w / "hello.py")]
    )
    env: dict[str, str] | None = None
    target_ms_over: float | None = None  # the target, shown next to the result


@dataclass
class SnippetCase:
    """Time ``body`` (Python source run ``loops`` times in a timed loop after ``init``).

    The snippet runs under plain python3 and under ``python-sb`` with ``sb_args`` (rule options
    and the rule file are the case's business); each side prints nanoseconds per operation.
    """

    name: str
    init: str
    body: str
    loops: int
    sb_args: Callable[[Path], list[str]]
    target_ratio: float | None = None
