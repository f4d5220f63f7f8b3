"""The ``eval-*`` extension the Python layer is handed when it is armed (issue 24 item 2).

The guard sits below the eval guard in the layers (docs/architecture.md, Layers): it never
imports ``evalguard``. ``launch/child.py`` (and ``launch/inprocess.py``) load this module by
name (``child.EXTENSIONS["eval"]``) when the policy has ``eval-*`` lines or the run learns or
audits, and hand it to ``guard.arm(..., eval_extension=)``; ``guard/evalbuiltins.py`` calls
four of these functions, and nothing else of the eval machinery, while it arms the guard.
``launch/start.py`` calls :func:`check` before a start (the same table names this module).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.policy.model import Policy

__all__ = ["arm", "check", "has_default_profile", "install", "install_learning"]


def check(policy: Policy) -> None:
    """``ConfigError`` naming every ``eval-*`` rule no profile may grant: called by the start
    path (``launch/start.py``) before anything starts, so that such a rule file is refused as
    every other (exit status 2, nothing run) rather than when the child arms its guard."""

    from pysandboxes.evalguard import api, rules

    for profile in rules.profiles(policy):
        api.rules_for(policy, profile)


def arm(policy: Policy, operations: Any) -> None:
    """Give ``guarded_eval`` the armed policy and the eval worker's operations (the guard's
    ``fork``/``kill``/``setrlimit``, or ``None``): ``evalguard.api.arm``."""

    from pysandboxes.evalguard import api

    api.arm(policy, operations)


def has_default_profile(policy: Policy) -> bool:
    """Whether the policy's ``eval-*`` lines define the default profile (not only named ones,
    which ``guarded_eval(profile=...)`` is the only way into)."""

    from pysandboxes.evalguard import rules

    return None in rules.profiles(policy)


def install(
    caller_is_program: Callable[[tuple[str, ...]], bool], deputies: tuple[str, ...]
) -> None:
    """Replace ``eval``, ``exec`` and ``compile`` with the checked ones (``evalguard.program``)."""

    from pysandboxes.evalguard import program

    program.install(caller_is_program, deputies)


def install_learning(
    caller_is_program: Callable[[tuple[str, ...]], bool],
    deputies: tuple[str, ...],
    record: Callable[[tuple[tuple[str, object], ...]], None],
) -> None:
    """Learning and audit mode: evaluations run as in plain Python, and what each needs is
    recorded (``guarded_eval`` runs in-process then: ``api.LEARNING``)."""

    from pysandboxes.evalguard import api, program

    api.LEARNING[:] = [True]
    program.install_learning(caller_is_program, deputies, record)
