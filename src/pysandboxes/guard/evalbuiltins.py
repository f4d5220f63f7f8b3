"""The guarded ``eval``, ``exec`` and ``compile`` builtins (``eval-*`` rules, SPEC §3.6).

Installed by :func:`pysandboxes.guard.hook.install` only when the policy has ``eval-*`` lines
for the default profile. A call whose caller is the program (the first frame outside the
guard and the code deputies, as for every other decision) is checked and run by the eval
extension the guard is handed (``evalguard/extension.py``, loaded by ``launch/child.py``: the
guard, a layer below the eval guard, never imports it); a library's call goes to the original
builtin, and its ``compile`` event is judged by the hook as before (libraries' own code
generation keeps working). The originals kept here are harmless in the program's hands: a
compile of source text by the program through them is still refused by the hook
(``dynamic-code``).

This module is a guard module (its frames are skipped when the caller is looked for).
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
    extension: Any,
    caller_is_program: Callable[[tuple[str, ...]], bool],
    busy_functions: tuple[Callable[[], Any], Callable[[Any], None]] | None = None,
    kit: Any = None,
    own_process: bool = False,
) -> None:
    """Arm the eval rules and replace the three builtins (see the module docstring);
    ``extension``: ``evalguard/extension.py``.

    ``busy_functions`` (the guard's ``enter``/``leave``) make the process operations the
    eval worker needs (:func:`worker_operations`); :func:`let_worker_through` lets exactly
    those through the hook. ``own_process``: this process is a partial-mode worker (outside
    python-sb, ``guarded_eval``'s worker is one), whose limits the eval worker sets.

    The replacements live in ``evalguard/program.py``, not here: library code the original
    builtins run (a namedtuple's ``sys._getframe``) must not find a guard frame among its
    callers. That file is one of the ``CODE_DEPUTIES``, so the frame that decides is its
    caller's.
    """

    operations = None
    if busy_functions and kit is not None and sys.platform != "win32":  # no fork on Windows
        operations = worker_operations(busy_functions, kit, own_process)
    extension.arm(policy, operations)
    if not extension.has_default_profile(policy):
        return  # named profiles only: guarded_eval(profile=...) is the way in
    extension.install(_hidden_caller_check(caller_is_program, kit), CODE_DEPUTIES)


def _hidden_caller_check(
    caller_is_program: Callable[[tuple[str, ...]], bool], kit: Any
) -> Callable[[tuple[str, ...]], bool]:
    """``caller_is_program`` as the replaced builtins may hold it: they are the program's
    (``builtins.compile.__closure__`` is read with no audit event), and the guard's frame
    functions hold its ``enter()``, which marks a thread busy (the hook then lets
    introspection and signals through). So the function is kept in the guard's hidden
    generators (:func:`pysandboxes.guard.native_files.hide_reentrant`), reachable through
    ``gi_frame`` or ``gc`` only, both refused. (``CODE_DEPUTIES`` names ``program.py``; the
    frames of the hidden generators and of this module are guard frames: the caller found is
    the same.)"""

    if kit is None:  # a caller that gives no kit (tests of the builtins alone)
        return caller_is_program
    from pysandboxes.guard.native_files import hide_reentrant

    type_, tuple_, str_, len_, type_error = kit.type, tuple, str, kit.len, TypeError

    def exact_deputies(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # The function that sends this request is the program's to call: the check marks the
        # thread busy, then tests and reads the deputies -- a __bool__, __iter__ or __eq__ of
        # the program's would run busy (attacks/disarm_busy_from_caller_check_argument.py).
        if kwargs or len_(args) != 1 or type_(args[0]) is not tuple_:
            raise type_error("python-sb: the caller check takes a tuple of str")
        for item in args[0]:
            if type_(item) is not str_:
                raise type_error("python-sb: the caller check takes a tuple of str")
        return args, kwargs

    call = hide_reentrant(caller_is_program, kit, exact_deputies)

    def is_program(deputies: tuple[str, ...]) -> bool:
        return call((deputies,), {})  # type: ignore[no-any-return]

    return is_program


def install_learning(
    extension: Any,
    caller_is_program: Callable[[tuple[str, ...]], bool],
    record: Callable[[tuple[tuple[str, object], ...]], None],
) -> None:
    """Learning and audit mode: record the ``eval-*`` items each source text the program
    evaluates needs, and run it as plain Python does (learning grants everything)."""

    extension.install_learning(caller_is_program, CODE_DEPUTIES, record)


#: The events the eval worker's own operations raise, let through while the guard marks the
#: thread busy (:func:`worker_operations`); any other call of these functions is judged.
WORKER_EVENTS = ("os.fork", "os.kill", "resource.setrlimit")


#: Children of the guard's eval-worker fork alive at once (the warm worker, plus the ``fork``
#: backend's per-call children of concurrent threads).
MAX_WORKERS = 4


def worker_operations(
    busy_functions: tuple[Callable[[], Any], Callable[[Any], None]],
    kit: Any,
    own_process: bool = False,
) -> tuple[Callable[[], int], Callable[[int], None], Callable[[int, tuple[int, int]], None]]:
    """``(fork, kill, setrlimit)`` for ``guarded_eval``'s warm worker (``evalguard/worker.py``).

    Forking the sandboxed process widens nothing -- the child has the same kernel sandbox,
    the same armed guard and no exec --, killing that child is how a timeout ends a long C
    call, and lowering a resource limit in it is how its evaluations are bounded; so the
    guard, not ``python-api``, decides these operations for the eval worker. Each runs with the
    thread marked busy (the hook then skips these events only: :func:`let_worker_through`).

    The program can call these three functions too (``evalguard.api`` keeps them), so each
    is bounded to what the worker needs: at most :data:`MAX_WORKERS` children made by
    ``fork`` are alive at once and they fork no more (a fork bomb through them stops there),
    ``kill`` sends
    ``SIGKILL`` to them only, and ``setrlimit`` works only in such a child or in a partial-mode
    worker process (``own_process``), never on a program's own limits. What they hold --
    the guard's ``enter``/``leave``, which mark a thread busy, the real functions, the
    children -- must not be reachable through their
    ``__closure__`` (read and written with no audit event): it lives in one function kept in
    the guard's hidden generators (:func:`pysandboxes.guard.native_files.hide_reentrant`),
    reachable through ``gi_frame`` or ``gc`` only, both refused
    (``tests/redteam/eval/test_worker_default.py``, the operations' closures).
    """

    if sys.platform == "win32":  # never called there (install passes no busy functions)
        raise OSError("the eval worker's fork, kill and rlimits exist on POSIX only")
    import os
    import resource

    from pysandboxes.guard.native_files import hide_reentrant

    enter, leave = busy_functions
    real_fork, real_kill, real_setrlimit = os.fork, os.kill, resource.setrlimit
    real_waitid = getattr(os, "waitid", None)
    children: set[int] = set()
    in_worker = [own_process]
    forked = [False]  # this process is a child of that fork: it makes no more (no fork tree)
    limit = MAX_WORKERS
    # Everything operate and alive use is captured now: they run in a hidden generator after
    # arming, where a name looked up in this module's namespace (in sys.modules) or an os
    # attribute, both replaceable with no audit event, would run the program's code next to
    # enter() (attacks/disarm_busy_from_worker_operation_global.py).
    len_ = len
    permission_error, lookup_error, child_error = (
        PermissionError,
        ProcessLookupError,
        ChildProcessError,
    )
    by_pid = getattr(os, "P_PID", 0)
    status_flags = getattr(os, "WEXITED", 0) | getattr(os, "WNOHANG", 0) | getattr(os, "WNOWAIT", 0)

    def alive(pid: int) -> bool:
        if real_waitid is None:
            return True  # counted until killed
        try:  # WNOWAIT: the status stays for the worker's own wait
            found = real_waitid(by_pid, pid, status_flags)
        except child_error:
            return False  # already reaped
        return found is None

    def operate(operation: str, pid: int = 0, which: int = 0, limits: Any = None) -> Any:
        if operation == "fork":
            if forked[0]:
                raise permission_error("guarded_eval's worker forks no worker of its own")
            for child in [child for child in children if not alive(child)]:
                children.discard(child)
            if len_(children) >= limit:
                raise permission_error(
                    f"guarded_eval's workers: {len_(children)} are alive, at most {limit} "
                    "(the guard forks only for the eval worker; os.fork is judged by python-api)"
                )
            state = enter()
            try:
                made = real_fork()
            finally:
                leave(state)
            if made:
                children.add(made)
            else:
                children.clear()
                in_worker[0] = forked[0] = True
            return made
        if operation == "kill":
            if pid not in children:
                raise lookup_error(f"{pid} is not a worker of guarded_eval")
            children.discard(pid)  # killed once, then reaped by its parent
            state = enter()
            try:
                real_kill(pid, 9)
            finally:
                leave(state)
            return None
        if not in_worker[0]:
            raise permission_error("the guard sets resource limits only in guarded_eval's worker")
        state = enter()
        try:
            real_setrlimit(which, limits)
        finally:
            leave(state)
        return None

    str_, tuple_, type_, type_error = str, tuple, type, TypeError
    index = int.__index__  # C: the value of an int (subclass), no program code

    def exact_request(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # The exposed operations below pass exact values, but their closure (and so ``call``)
        # is the program's to use: whatever it sends is made exact here, before operate
        # compares or hashes it next to enter() (an __eq__, __hash__ or __index__ of the
        # program's would run there).
        count = len_(args)
        if kwargs or not 1 <= count <= 4 or type_(args[0]) is not str_:
            raise type_error("python-sb: the eval worker's operations take (str, int, int, limits)")
        pid = index(args[1]) if count > 1 else 0
        which = index(args[2]) if count > 2 else 0
        limits = args[3] if count > 3 else None
        if limits is not None:
            if type_(limits) is not tuple_ or len_(limits) != 2:
                raise type_error("python-sb: resource limits are a (soft, hard) tuple")
            limits = (index(limits[0]), index(limits[1]))
        return (args[0], pid, which, limits), {}

    call = hide_reentrant(operate, kit, exact_request)

    def fork() -> int:
        return call(("fork",), {})  # type: ignore[no-any-return]

    int_ = int

    def kill(pid: int) -> None:
        call(("kill", int_(pid)), {})

    def setrlimit(which: int, limits: tuple[int, int]) -> None:
        call(("setrlimit", 0, int_(which), (int_(limits[0]), int_(limits[1]))), {})

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
