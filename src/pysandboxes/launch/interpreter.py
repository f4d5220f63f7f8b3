"""The interpreter python-sb runs in: its installation's directories, and the collector's pause
during python-sb's own start.

Shared by the two processes python-sb owns: the command line's (``cli``, ``start``,
``os-sandbox=none``'s ``inprocess``) imports it by name; the exec'd interpreter's bootstrap
(``launch/child.py``, loaded by path) loads this file by path too, so that a child which does
not arm the Python layer still imports nothing of the package. Kept out of ``child.py`` so that
the command line's process, which needs these three functions, does not load the bootstrap's
whole code (a tenth of its own start's instructions: docs/performance.md, "Eighth pass").

Standard library only, nothing heavier than ``os`` and ``sys`` (the bootstrap's rule).
"""

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any


def installation_dirs() -> "tuple[str, ...]":
    """The interpreter's installation and site directories, and the directory that holds
    ``pysandboxes`` (``launch/start.prefixes``: readable by default, SPEC §3.1; here also what
    ``child.release_program`` leaves alone)."""

    found: list[str] = []
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        if path and path not in found:
            found.append(path)
    for entry in sys.path:
        if entry and ("site-packages" in entry or "dist-packages" in entry) and entry not in found:
            found.append(entry)
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if src not in found:
        found.append(src)
    return tuple(found)


# -- the collector -------------------------------------------------------------------------------
#
# A run's start allocates tens of thousands of objects that live as long as the run: the
# launcher's and the guard's modules, their code, the rule tables, the guard's closures. For the
# cyclic collector they are pure cost: its passes during the start free nothing, every full
# collection while the program runs walks them again, and so does the collection at the
# interpreter's exit (docs/performance.md, "Start-up"). Two steps, here for every process
# python-sb owns (the exec'd interpreter's bootstrap, ``launch/child.py``, and the command
# line's process, ``os-sandbox=none``'s too):
#
# - ``pause_collector`` stops the collector for python-sb's own start, only in a process
#   python-sb owns: the console script (``cli.main``) and the bootstrap (``child.main``). Never in a
#   caller's process (partial mode's ``@sandbox`` host, a notebook), never while program code
#   runs (partial mode's workers import the program's module before arming: not paused).
# - ``settle_heap`` is the last step before the program's first instruction, or before
#   python-sb waits for its child: the objects that exist then go to the collector's permanent
#   generation (``gc.freeze()``), which no later collection walks, and the collector is put
#   back. Only where ``pause_collector`` ran: ``gc.freeze`` concerns the whole process, so only
#   a process whose every object so far is python-sb's own is frozen.
#
# What the program can tell: ``gc.get_freeze_count()`` is not zero; ``gc.get_objects()`` and
# ``gc.get_referrers()`` do not list the start's objects (refused as introspection unless
# granted; with the grant they show less of python-sb, not more); a cycle of the start's objects
# the program breaks is never freed (memory: none of python-sb's objects needs its finalizer
# run at exit). The program's own objects are collected as in a plain interpreter, at exit too.
# Not a security step: the collector frees memory, it decides nothing.

#: ``[True]`` while ``pause_collector`` holds the collector stopped in this process.
_COLLECTOR_PAUSED: "list[bool]" = []

#: The other steps that end python-sb's start in this process, run once by ``settle_heap``: the
#: finders of the command line's units leaving ``sys.meta_path`` (:func:`start_unit`).
_AT_START_END: "list[Any]" = []


def at_start_end(step: "Any") -> None:
    """Have ``settle_heap`` call ``step()`` (before the collector is put back)."""

    _AT_START_END.append(step)


def start_unit(kind: str) -> None:
    """In the command line's process, during python-sb's start (``pause_collector`` ran): the
    modules of unit ``kind`` (``launch/unit.py``: ``launcher``, or a provider's name) from it
    until the start ends. Nothing in a process python-sb does not own (partial mode's caller),
    for a name without a unit, or without a valid one."""

    if not _COLLECTOR_PAUSED:
        return
    from pysandboxes.launch import unit

    if kind not in unit.UNITS:
        return
    modules = unit.installed(unit.PACKAGE_DIR, kind)
    if modules.__enter__():
        at_start_end(modules.__exit__)


def pause_collector() -> None:
    """Stop the cyclic collector for python-sb's start (see the section's comment); nothing
    when it is off already (a second call, or start-up code that disabled it)."""

    import gc  # built-in

    if not _COLLECTOR_PAUSED and gc.isenabled():
        gc.disable()
        _COLLECTOR_PAUSED.append(True)


def settle_heap(freeze: bool = True) -> None:
    """Freeze the start's objects (``freeze``) and put the collector back, once, if
    ``pause_collector`` stopped it; nothing otherwise (a caller's process, a worker).
    ``freeze=False``: python-sb's own work ends in this process without a program. First the
    steps of :func:`at_start_end`, whether or not the collector was paused."""

    while _AT_START_END:
        _AT_START_END.pop()()
    if _COLLECTOR_PAUSED:
        import gc

        _COLLECTOR_PAUSED.clear()
        if freeze:
            gc.freeze()
        gc.enable()
