"""The parent's half of the hand-over to the child interpreter: the run description and the
command line of the bootstrap (``launch/boot.py``) that reads it.

Kept apart from ``child.py`` (which holds the reading half and everything that runs in the
child) so that python-sb's own process does not load the child's code to start a run.

Wire format (parent -> child), written to a descriptor the child inherits (a memfd, or a pipe
where there is none: ``launch/channel.py``)::

    SIZE LF header guard-data

- ``header`` (``SIZE`` bytes): NUL-separated UTF-8 strings (``surrogateescape``): ``FORMAT``,
  then ``name``/``value`` pairs of the run description, then the program's arguments after the
  marker ``--args--``. Split without any module: a run that does not arm the Python layer
  imports nothing to read it.
- ``guard-data`` (empty when the Python layer is not armed): ``marshal.dumps([context, policy],
  4)`` where ``context`` is ``RunContext.to_dict()`` and ``policy`` is ``Policy.to_data()``:
  dicts, lists, ``str``, ``int``, ``bool`` and ``None`` only. The child checks that the decoded
  value holds nothing else before building the policy from it. ``marshal`` rather than JSON:
  it is built into the interpreter, while ``json`` pulls ``re``, ``enum`` and ``functools`` into
  every guarded run (several milliseconds); and never ``pickle``, which runs code to decode
  (DESIGN decision 1: the policy crosses as data). Version 4 of the marshal format is named
  explicitly so that the format does not depend on the interpreter's default.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from pysandboxes.policy.model import Policy
    from pysandboxes.runtime import RunContext

#: Must match ``child.FORMAT`` (the child reads it without importing this package).
FORMAT = "pysb-run-2"
ARGS_MARK = "--args--"
MARSHAL_VERSION = 4

#: The child's file, loaded by path by the bootstrap.
CHILD_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
#: The directory that holds the ``pysandboxes`` package.
SRC_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def guard_data(context: RunContext, policy: Policy) -> bytes:
    """The ``guard-data`` part: what ``pysandboxes.guard.arm`` needs, as plain data."""

    import marshal

    return marshal.dumps([context.to_dict(), policy.to_data()], MARSHAL_VERSION)


def encode_run(fields: dict[str, str], args: list[str], data: bytes = b"") -> bytes:
    """The bytes the parent writes for the child (see the module docstring)."""

    items = [FORMAT]
    for key, value in fields.items():
        items += [key, value]
    items.append(ARGS_MARK)
    items += args
    for item in items:
        if "\0" in item:
            raise ValueError(f"NUL character in launch data: {item[:40]!r}")
    header = "\0".join(items).encode("utf-8", "surrogateescape")
    return b"%d\n" % len(header) + header + data


#: The file the child interpreter runs first (``launch/boot.py``; why not ``-c``: see there).
BOOT_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot.py")


def bootstrap_args(fd: int | str) -> tuple[str, str, str, str]:
    """The child's command line after the interpreter and its options: ``boot.py``, the path
    of ``child.py`` it loads, descriptor ``fd`` (or, on Windows, ``"hN"``: the inherited handle
    ``N``; see ``launch/channel.py``), and the directory that holds ``pysandboxes``."""

    return (BOOT_FILE, CHILD_FILE, str(fd), SRC_DIR)
