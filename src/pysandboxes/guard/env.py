"""Environment (SPEC §3.4): what the guard does about variables.

Enforcement is the launcher's (DESIGN decision 3): the child's environment holds only what
``env=`` grants, so there is nothing to hide here. In learn and audit modes the guard records
the names the program reads, so that learning can write ``env=NAME=${NAME}``: reading
``os.environ`` raises no audit event, so ``os.environ`` becomes an instance of a subclass that
records ``environ[name]``, ``environ.get(name)`` and ``name in environ`` (``os.getenv`` goes
through ``get``). Listed in the wrapper table of ``docs/python-layer.md``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (guard/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def install_recorder(record: Callable[[tuple[tuple[str, Any], ...]], None]) -> None:
    """Make ``os.environ`` record the names read (learn/audit mode only)."""

    base = type(os.environ)
    isinstance_, str_ = isinstance, str  # captured: this module's namespace is reachable

    class RecordingEnviron(base):  # type: ignore[valid-type,misc]
        def __getitem__(self, key: Any) -> Any:
            if isinstance_(key, str_):
                record((("kind", "env"), ("name", key)))
            return base.__getitem__(self, key)

        def __contains__(self, key: object) -> bool:
            if isinstance_(key, str_):
                record((("kind", "env"), ("name", key)))
            return base.__contains__(self, key)  # type: ignore[no-any-return]

    os.environ.__class__ = RecordingEnviron
