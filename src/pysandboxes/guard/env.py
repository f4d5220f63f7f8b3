"""Environment (SPEC §3.4): what the guard does about variables.

Enforcement is the launcher's (DESIGN decision 3): the child's environment holds only what
``env=`` grants, so there is nothing to hide here. In learn and audit modes the guard records
what the program reads, so that learning can write ``env=NAME=${NAME}``: reading
``os.environ`` raises no audit event, so ``os.environ`` becomes an instance of a subclass that
records.

Two kinds of read, recorded differently (issue 11 point 13):

- **by name**: ``environ[name]``, ``environ.get(name)``, ``os.getenv(name)``, ``name in
  environ``, ``pop``/``setdefault`` of a name: ``{"kind": "env", "name": NAME}``. Only these
  are learned.
- **a scan**: iterating the mapping (``for name in environ``, ``.items()``, ``.keys()``,
  ``.values()``, ``.copy()``, ``dict(environ)``, ``{**environ}``, ``environ | {...}``,
  ``==``, ``repr``; ``urllib.request.getproxies`` looking for ``*_proxy``):
  ``{"kind": "env-scan"}``, once, never one record per variable. A scan reads each value
  through ``environ[name]`` with the name it was just handed; those names are the *same
  objects* every time (one per variable, kept here), so a read whose key is one of them is
  part of a scan, while a name the program wrote or built (``"HOME"``) is another object and is
  a read by name.

``os.environb`` is recorded the same way (its names decoded with ``surrogateescape``, as
``os.fsdecode`` does). Listed in the wrapper table of ``docs/python-layer.md``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


def install_recorder(record: Callable[[tuple[tuple[str, Any], ...]], None]) -> None:
    """Make ``os.environ`` record the names read and the scans (learn/audit mode only)."""

    base = type(os.environ)
    str_ = str
    type_ = type
    isinstance_ = isinstance
    bytes_ = bytes
    decode = bytes.decode
    # The one object handed out for each name by a scan (see the module docstring).
    handed: dict[str, str] = {}
    get_handed = handed.get
    keep = handed.setdefault
    scan_fields = (("kind", "env-scan"),)

    def by_name(key: Any) -> None:
        if type_(key) is str_:
            if get_handed(key) is not key:
                record((("kind", "env"), ("name", key)))
        elif type_(key) is bytes_:  # os.environb
            if get_handed(key) is not key:
                record((("kind", "env"), ("name", decode(key, "utf-8", "surrogateescape"))))
        elif isinstance_(key, str_):  # a str subclass: its plain text, no method of its own
            record((("kind", "env"), ("name", str_.__str__(key))))

    class RecordingEnviron(base):  # type: ignore[valid-type,misc]
        def __getitem__(self, key: Any) -> Any:
            by_name(key)
            return base.__getitem__(self, key)

        def __contains__(self, key: object) -> bool:
            by_name(key)
            return base.__contains__(self, key)  # type: ignore[no-any-return]

        def __iter__(self) -> Iterator[str]:
            record(scan_fields)
            for key in base.__iter__(self):
                yield keep(key, key)

        def __repr__(self) -> str:
            record(scan_fields)
            return base.__repr__(self)  # type: ignore[no-any-return]

    os.environ.__class__ = RecordingEnviron
    environb = getattr(os, "environb", None)  # POSIX only; its own mapping of the same data
    if environb is not None and type(environb) is base:
        environb.__class__ = RecordingEnviron
