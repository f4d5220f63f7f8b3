# rule: expose-ro=.
# rule: python-import=pysandboxes
# expect: import ModuleNotFoundError

"""Objective: import socket with no python-import rule for it, through a function of
python-sb's own partial-mode worker that imports the name it is given.

The worker imports what a shipped function needs with ``program_import``, whose code carries a
program's file name so that the guard judges the import as the function's own. Built from a
function of ``partial/worker.py`` rather than compiled from source, it must leave no such
function behind: one left in the module, with the library file's name, imported for whoever
called it, and the import check took the library for the importer (this stop's first version
kept ``_program_import``). A program allowed to import python-sb (an agent's tool that uses
partial mode itself) reaches the module.
"""

from _harness import attempt


def payload():
    from pysandboxes.partial import worker

    left = getattr(worker, "_program_import", None)  # the importer as written, if kept
    for importer in (left, worker.program_import):
        if importer is not None:
            return importer("socket").__name__
    return None


attempt(payload)
