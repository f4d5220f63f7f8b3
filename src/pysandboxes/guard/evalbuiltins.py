"""The guarded ``eval``, ``exec`` and ``compile`` builtins (``eval-*`` rules, SPEC §3.6).

Installed by :func:`pysandboxes.guard.hook.install` only when the policy has ``eval-*`` lines
for the default profile. A call whose caller is the program (the first frame outside the
guard and the code deputies, as for every other decision) is checked and run by
:mod:`pysandboxes.evalguard.program`; a library's call goes to the original builtin, and its
``compile`` event is judged by the hook as before (libraries' own code generation keeps
working). The originals kept here are harmless in the program's hands: a compile of source
text by the program through them is still refused by the hook (``dynamic-code``).

This module is a guard module (its frames are skipped when the caller is looked for); it
imports the eval machinery only when installed.
"""

from __future__ import annotations

from pysandboxes.guard.frames import CODE_DEPUTIES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from pysandboxes.policy.model import Policy


def install(policy: Policy, caller_is_program: Callable[[tuple[str, ...]], bool]) -> None:
    """Arm the eval rules and replace the three builtins (see the module docstring).

    The replacements live in ``evalguard/program.py``, not here: library code the original
    builtins run (a namedtuple's ``sys._getframe``) must not find a guard frame among its
    callers. That file is one of the ``CODE_DEPUTIES``, so the frame that decides is its
    caller's.
    """

    from pysandboxes.evalguard import api, program
    from pysandboxes.evalguard import rules as rules_module

    api.arm(policy)
    if None not in rules_module.profiles(policy):
        return  # named profiles only: guarded_eval(profile=...) is the way in
    program.install(caller_is_program, CODE_DEPUTIES)  # CODE_DEPUTIES names program.py


def install_learning(
    caller_is_program: Callable[[tuple[str, ...]], bool],
    record: Callable[[tuple[tuple[str, object], ...]], None],
) -> None:
    """Learning and audit mode: record the ``eval-*`` items each source text the program
    evaluates needs, and run it as plain Python does (learning grants everything)."""

    from pysandboxes.evalguard import program

    program.install_learning(caller_is_program, CODE_DEPUTIES, record)
