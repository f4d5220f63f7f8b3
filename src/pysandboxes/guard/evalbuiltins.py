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

import sys

from pysandboxes.guard.frames import CODE_DEPUTIES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.policy.model import Policy


def install(
    policy: Policy,
    caller_is_program: Callable[[tuple[str, ...]], bool],
    busy_functions: tuple[Callable[[], Any], Callable[[Any], None]] | None = None,
) -> None:
    """Arm the eval rules and replace the three builtins (see the module docstring).

    ``busy_functions`` (the guard's ``enter``/``leave``) make the process operations the
    eval worker needs (:func:`worker_operations`); :func:`let_worker_through` lets exactly
    those through the hook.

    The replacements live in ``evalguard/program.py``, not here: library code the original
    builtins run (a namedtuple's ``sys._getframe``) must not find a guard frame among its
    callers. That file is one of the ``CODE_DEPUTIES``, so the frame that decides is its
    caller's.
    """

    from pysandboxes.evalguard import api, program
    from pysandboxes.evalguard import rules as rules_module

    operations = None
    if busy_functions and sys.platform != "win32":  # no fork, kill(9) or rlimits on Windows
        operations = worker_operations(busy_functions)
    api.arm(policy, operations)
    if None not in rules_module.profiles(policy):
        return  # named profiles only: guarded_eval(profile=...) is the way in
    program.install(caller_is_program, CODE_DEPUTIES)  # CODE_DEPUTIES names program.py


def install_learning(
    caller_is_program: Callable[[tuple[str, ...]], bool],
    record: Callable[[tuple[tuple[str, object], ...]], None],
) -> None:
    """Learning and audit mode: record the ``eval-*`` items each source text the program
    evaluates needs, and run it as plain Python does (learning grants everything)."""

    from pysandboxes.evalguard import api, program

    api.LEARNING[:] = [True]  # guarded_eval runs in-process: evaluations are recorded
    program.install_learning(caller_is_program, CODE_DEPUTIES, record)


#: The events the eval worker's own operations raise, let through while the guard marks the
#: thread busy (:func:`worker_operations`); any other call of these functions is judged.
WORKER_EVENTS = ("os.fork", "os.kill", "resource.setrlimit")


def worker_operations(
    busy_functions: tuple[Callable[[], Any], Callable[[Any], None]],
) -> tuple[Callable[[], int], Callable[[int], None], Callable[[int, tuple[int, int]], None]]:
    """``(fork, kill, setrlimit)`` for ``guarded_eval``'s warm worker (``evalguard/worker.py``).

    Forking the sandboxed process widens nothing -- the child has the same kernel sandbox,
    the same armed guard and no exec --, killing that child is how a timeout ends a long C
    call, and lowering a resource limit in it is how its evaluations are bounded; so the
    guard, not ``python-api``, decides these operations for the eval worker. ``kill`` sends
    ``SIGKILL`` to a process ``fork`` made, nothing else. Each runs with the thread marked
    busy (the hook then skips these events only: :func:`let_worker_through`).
    """

    if sys.platform == "win32":  # never called there (install passes no busy functions)
        raise OSError("the eval worker's fork, kill and rlimits exist on POSIX only")
    import os
    import resource

    enter, leave = busy_functions
    real_fork, real_kill, real_setrlimit = os.fork, os.kill, resource.setrlimit
    children: set[int] = set()

    def fork() -> int:
        state = enter()
        try:
            pid = real_fork()
        finally:
            leave(state)
        if pid:
            children.add(pid)
        else:
            children.clear()
        return pid

    def kill(pid: int) -> None:
        if pid not in children:
            raise ProcessLookupError(f"{pid} is not a worker of guarded_eval")
        children.discard(pid)  # killed once, then reaped by its parent
        state = enter()
        try:
            real_kill(pid, 9)
        finally:
            leave(state)

    def setrlimit(which: int, limits: tuple[int, int]) -> None:
        state = enter()
        try:
            real_setrlimit(which, limits)
        finally:
            leave(state)

    return fork, kill, setrlimit


def let_worker_through(
    dispatch: dict[str, Callable[[tuple[Any, ...]], None]],
    busy: dict[int, int],
    get_ident: Callable[[], int],
) -> None:
    """Make the handlers of :data:`WORKER_EVENTS` skip the events of a busy thread (the
    eval worker's operations, :func:`worker_operations`); others are judged as before."""

    def skipping(handler: Callable[[tuple[Any, ...]], None]) -> Callable[[tuple[Any, ...]], None]:
        def judge_unless_busy(args: tuple[Any, ...]) -> None:
            if get_ident() in busy:
                return
            handler(args)

        return judge_unless_busy

    for event in WORKER_EVENTS:
        handler = dispatch.get(event)
        if handler is not None:
            dispatch[event] = skipping(handler)
