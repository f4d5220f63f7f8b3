"""Sensitive calls (SPEC §3.5): the registry, and the handlers that apply ``python-api``.

:data:`REGISTRY` is the one table of sensitive functions: the name a rule uses
(``python-api=ALLOW:os.system``), its category, the audit event(s) that reveal a call, and the
other names that stand for the same call (``pickle.load`` for ``pickle.loads``). Functions for
which CPython raises no event are wrapped (``pysandboxes.guard.wrappers``) and raise the
private event ``pysandboxes.call`` with the function's name.

Decision (``decide.api_decision`` for each name, precomputed at arm time): a function rule
beats its category rule, which beats ``*``; at one level DENY wins. A *chain* needs one grant:
the library functions on the stack between the program and the event are looked up too
(``subprocess.run`` covers the ``subprocess.Popen`` event it causes; ``os.popen`` covers its
``subprocess.Popen``), and a function rule for any of them decides.

The refusal is a :class:`~pysandboxes.errors.RuleApiPermissionError` naming the function, its
category, and the two lines that would allow it (the function alone, or its category).
"""

from __future__ import annotations

from pysandboxes.guard.denials import API, Reporter
from pysandboxes.guard.frames import CODE_DEPUTIES, Frames
from pysandboxes.policy.model import API_CATEGORIES, Policy

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple


class Sensitive(NamedTuple):
    """One sensitive function: the rule name, its category, the events, other names for it."""

    function: str
    category: str
    events: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    wrapped: bool = False  # CPython raises no event: python-sb wraps it (docs/python-layer.md)


_CALL = "pysandboxes.call"

REGISTRY: tuple[Sensitive, ...] = (
    # process-exec
    Sensitive("os.system", "process-exec", ("os.system",)),
    Sensitive(
        "os.execv",
        "process-exec",
        ("os.exec",),
        (
            "os.execl",
            "os.execle",
            "os.execlp",
            "os.execlpe",
            "os.execve",
            "os.execvp",
            "os.execvpe",
        ),
    ),
    # subprocess (os.popen, shell=True...) calls it instead of fork_exec when it can (CPython
    # 3.13 does for close_fds=True too): the same chain of library names covers it. The same-call
    # alias posix_spawnp stays last (``decision`` reads the last alias's function rule).
    Sensitive(
        "os.posix_spawn",
        "process-exec",
        ("os.posix_spawn",),
        (
            "subprocess.Popen",
            "subprocess.run",
            "subprocess.call",
            "subprocess.check_call",
            "subprocess.check_output",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
            "os.popen",
            "os.posix_spawnp",
        ),
    ),
    Sensitive(
        "os.fork",
        "process-exec",
        ("os.fork",),
        (
            "os.spawnv",
            "os.spawnve",
            "os.spawnl",
            "os.spawnle",
            "os.spawnvp",
            "os.spawnvpe",
            "os.spawnlp",
            "os.spawnlpe",
        ),
    ),
    Sensitive("os.forkpty", "process-exec", ("os.forkpty",), ("pty.fork", "pty.spawn")),
    Sensitive(
        "subprocess.Popen",
        "process-exec",
        ("subprocess.Popen",),
        (
            "subprocess.run",
            "subprocess.call",
            "subprocess.check_call",
            "subprocess.check_output",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
            "os.popen",
        ),
    ),
    Sensitive(
        "_posixsubprocess.fork_exec",
        "process-exec",
        (_CALL,),
        (
            "subprocess.Popen",
            "subprocess.run",
            "subprocess.call",
            "subprocess.check_call",
            "subprocess.check_output",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
            "os.popen",
            "multiprocessing.Process.start",
        ),
        True,
    ),
    # A new interpreter has none of the program's audit hooks: guard/native_files.py wraps the
    # functions that make one (SUBINTERPRETERS), with or without a CPython event.
    Sensitive(
        "_xxsubinterpreters.create",
        "process-exec",
        ("cpython.PyInterpreterState_New", _CALL),
        (),
        True,
    ),
    Sensitive("_interpreters.create", "process-exec", (_CALL,), (), True),
    *(
        Sensitive(name, "process-exec", (_CALL,), (), True)
        for name in (
            "_testcapi.run_in_subinterp",
            "_testcapi.run_in_subinterp_with_config",
            "_testinternalcapi.create_interpreter",
            "_testinternalcapi.run_in_subinterp_with_config",
        )
    ),
    # process-control
    Sensitive("os.kill", "process-control", ("os.kill",)),
    Sensitive("os.killpg", "process-control", ("os.killpg",)),
    Sensitive("signal.pthread_kill", "process-control", ("signal.pthread_kill",)),
    Sensitive("resource.setrlimit", "process-control", ("resource.setrlimit",)),
    Sensitive("resource.prlimit", "process-control", ("resource.prlimit",)),
    Sensitive("os.setsid", "process-control", (_CALL,), (), True),
    Sensitive("os.setpgid", "process-control", (_CALL,), (), True),
    Sensitive("os.setpgrp", "process-control", (_CALL,), (), True),
    Sensitive("os.nice", "process-control", (_CALL,), (), True),
    Sensitive("os.abort", "process-control", (_CALL,), (), True),
    Sensitive("signal.alarm", "process-control", (_CALL,), (), True),
    Sensitive("signal.setitimer", "process-control", (_CALL,), (), True),
    # Another process's scheduling or a signal through a pidfd: CPython 3.11 raises no event.
    Sensitive("os.setpriority", "process-control", (_CALL,), (), True),
    Sensitive("os.sched_setaffinity", "process-control", (_CALL,), (), True),
    Sensitive("os.sched_setscheduler", "process-control", (_CALL,), (), True),
    Sensitive("os.sched_setparam", "process-control", (_CALL,), (), True),
    Sensitive("signal.pidfd_send_signal", "process-control", (_CALL,), (), True),
    # Descriptor control that reaches other processes (F_SETOWN, TIOCSTI...): judged by
    # guard/descriptors.py from the fcntl.fcntl / fcntl.ioctl events, by command.
    Sensitive("fcntl.fcntl", "process-control", ()),
    Sensitive("fcntl.ioctl", "process-control", ()),
    # privileges
    *(
        Sensitive("os." + name, "privileges", (_CALL,), (), True)
        for name in (
            "setuid",
            "setgid",
            "seteuid",
            "setegid",
            "setreuid",
            "setregid",
            "setresuid",
            "setresgid",
            "setgroups",
            "initgroups",
            "chroot",
            "umask",
            "unshare",
            "setns",
        )
    ),
    Sensitive("socket.sethostname", "privileges", ("socket.sethostname",)),
    Sensitive("fcntl.FIFREEZE", "privileges", (), ("fcntl.FITHAW",)),  # guard/descriptors.py
    # A device node (S_IFCHR/S_IFBLK): its later open would reach a device no rule grants.
    Sensitive("os.mknod", "privileges", ()),  # judged from the os.mknod wrapper
    # threads
    Sensitive(
        "_thread.start_new_thread",
        "threads",
        (_CALL,),
        ("threading.Thread.start", "_thread.start_new", "_thread.start_joinable_thread"),
        True,
    ),
    Sensitive("_thread.interrupt_main", "threads", (_CALL,), (), True),
    Sensitive("_thread.stack_size", "threads", (_CALL,), ("threading.stack_size",), True),
    # native
    Sensitive("ctypes.dlopen", "native", ("ctypes.dlopen",), ("ctypes.CDLL", "ctypes.cdll")),
    Sensitive("ctypes.dlsym", "native", ("ctypes.dlsym", "ctypes.dlsym/handle")),
    Sensitive("ctypes.string_at", "native", ("ctypes.string_at", "ctypes.wstring_at")),
    Sensitive(
        "ctypes.cast", "native", ("ctypes.call_function",), ("ctypes.memmove", "ctypes.memset")
    ),
    Sensitive(
        "ctypes.from_address",
        "native",
        ("ctypes.cdata", "ctypes.cdata/buffer", "ctypes.addressof", "ctypes.PyObj_FromPtr"),
    ),
    Sensitive("mmap.mmap", "native", ("mmap.__new__",)),
    Sensitive("_imp.create_dynamic", "native", ()),  # judged by the import handler
    # OpenSSL initialised with a configuration the program chose (engines, providers):
    # guard/native_files.py
    Sensitive("openssl.config", "native", (_CALL,)),
    # Tcl's file, process and socket commands (exec, open, socket...) in tkinter's interpreter:
    # C code with no audit event (guard/tcl.py hides them unless this is granted).
    Sensitive("tkinter.Tcl", "native", (_CALL,)),
    # introspection
    Sensitive("sys.settrace", "introspection", ("sys.settrace",), ("threading.settrace",)),
    Sensitive("sys.setprofile", "introspection", ("sys.setprofile",), ("threading.setprofile",)),
    Sensitive(
        "sys._current_frames", "introspection", ("sys._current_frames", "sys._current_exceptions")
    ),
    Sensitive("gc.get_objects", "introspection", ("gc.get_objects",)),
    Sensitive("gc.get_referrers", "introspection", ("gc.get_referrers",)),
    Sensitive("gc.get_referents", "introspection", ("gc.get_referents",)),
    Sensitive("sys.addaudithook", "introspection", ("sys.addaudithook",)),
    Sensitive("types.CodeType", "introspection", ("code.__new__",), ("code.replace",)),
    Sensitive("types.FunctionType", "introspection", ("function.__new__",)),
    Sensitive("object.__getattr__", "introspection", ()),  # restricted attributes, see hook
    Sensitive("sys._getframe", "introspection", ()),  # only of a frame whose caller is the guard
    Sensitive("object.__setattr__", "introspection", ()),  # function.__code__ assignment
    Sensitive("importlib.reload", "introspection", (_CALL,), (), True),
    Sensitive(
        "faulthandler.enable",
        "introspection",
        (_CALL,),
        ("faulthandler.dump_traceback_later", "faulthandler.register"),
        True,
    ),
    # dynamic code
    Sensitive("builtins.compile", "dynamic-code", (), ("builtins.eval", "builtins.exec")),
    Sensitive("builtins.exec", "dynamic-code", ()),  # module code from a file written at run time
    # deserialization
    Sensitive(
        "pickle.loads",
        "deserialization",
        ("pickle.find_class",),
        ("pickle.load", "pickle.Unpickler.load", "pickle.Unpickler.find_class"),
    ),
    Sensitive(
        "marshal.loads", "deserialization", ("marshal.loads", "marshal.load"), ("marshal.load",)
    ),
)

#: The registry's names that CPython implements in C (a builtin function or a C type's
#: method): no Python frame runs them, so the walk of ``decision`` never finds them on the
#: stack (``library_names`` names Python frames only). ``make_call_judge`` leaves them out of
#: the candidates it settles at arm time: ``marshal.load`` (an alias of ``marshal.loads``) cannot
#: be the outermost function of a chain, and ``python-api=ALLOW:marshal.loads`` then spares every
#: ``marshal.load`` event a walk of the whole stack (pytest's assertion rewriter reads each
#: cached module so: 120 us each under pytest's 60-100 frames, docs/performance.md). Checked in
#: every supported CPython: tests/unit/guard/test_calls.py resolves each name and reads the
#: module's source for a Python definition of the same name.
NATIVE_NAMES = frozenset(
    {
        "os.system", "os.execv", "os.execve", "os.posix_spawn", "os.posix_spawnp", "os.fork",
        "os.forkpty", "_posixsubprocess.fork_exec", "_xxsubinterpreters.create",
        "_interpreters.create", "_testcapi.run_in_subinterp", "os.kill", "os.killpg",
        "signal.pthread_kill", "resource.setrlimit", "resource.prlimit", "os.setsid",
        "os.setpgid", "os.setpgrp", "os.nice", "os.abort", "signal.alarm", "signal.setitimer",
        "os.setpriority", "os.sched_setaffinity", "os.sched_setscheduler", "os.sched_setparam",
        "signal.pidfd_send_signal", "fcntl.fcntl", "fcntl.ioctl", "os.setuid", "os.setgid",
        "os.seteuid", "os.setegid", "os.setreuid", "os.setregid", "os.setresuid", "os.setresgid",
        "os.setgroups", "os.initgroups", "os.chroot", "os.umask", "socket.sethostname",
        "os.mknod", "_thread.start_new_thread", "_thread.start_new", "_thread.interrupt_main",
        "_thread.stack_size", "_imp.create_dynamic", "sys.settrace", "sys.setprofile",
        "sys._current_frames", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
        "sys.addaudithook", "sys._getframe", "faulthandler.enable",
        "faulthandler.dump_traceback_later", "faulthandler.register", "builtins.compile",
        "builtins.eval", "builtins.exec", "pickle.loads", "pickle.load", "pickle.Unpickler.load",
        "pickle.Unpickler.find_class", "marshal.loads", "marshal.load",
    }
)  # fmt: skip

#: The restricted attribute reads (``object.__getattr__`` event) judged as introspection.
#: CPython 3.11 raises no event for ``f_locals``, ``f_globals``, ``f_back``, ``__globals__``,
#: ``__closure__``: what they reach is kept free of guard state (docs/python-layer.md).
RESTRICTED_ATTRIBUTES = frozenset(
    {
        "__code__",
        "f_code",
        "gi_code",
        "gi_frame",
        "cr_code",
        "cr_frame",
        "ag_code",
        "ag_frame",
        "tb_frame",
    }
)
#: Attributes that hand out a frame: refused for anyone when that frame's chain runs guard code.
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})


if TYPE_CHECKING:
    Decision = tuple[bool, str | None, str | None]  # (allowed, rule text, origin)


def precompute(policy: Policy) -> tuple[dict[str, Decision], dict[str, Decision]]:
    """``(by_function, function_rules)`` with ``decide.api_decision``.

    ``by_function``: the decision for every registry name (function, category or ``*``
    level). ``function_rules``: the decisions made by a *function-level* rule, for every
    function a rule names (the chain lookup uses these).
    """

    from pysandboxes.policy.decide import api_decision

    by_function: dict[str, Decision] = {}
    function_rules: dict[str, Decision] = {}
    for entry in REGISTRY:
        for name in (entry.function, *entry.aliases):
            allowed, rule = api_decision(policy, name, entry.category)
            by_function[name] = (
                allowed,
                rule.text if rule else None,
                str(rule.origin) if rule else None,
            )
    categories = {
        name: entry.category for entry in REGISTRY for name in (entry.function, *entry.aliases)
    }
    for rule in policy.python_api:
        target = rule.target
        if target == "*" or target in API_CATEGORIES:
            continue
        allowed, found = api_decision(policy, target, categories.get(target, ""))
        if found is not None and found.target == target:
            function_rules[target] = (allowed, found.text, str(found.origin))
    return by_function, function_rules


class CallJudge(NamedTuple):
    judge: Callable[[str, str, str | None], None]
    allowed: Callable[[str], bool]
    handlers: dict[str, Callable[[tuple[Any, ...]], None]]


def make_call_judge(policy: Policy, reporter: Reporter, frames: Frames) -> CallJudge:
    by_function, function_rules = precompute(policy)
    entries: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    events: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for entry in REGISTRY:
        row = (entry.function, entry.category, (entry.function, *entry.aliases))
        entries[entry.function] = row
        for alias in entry.aliases:
            entries.setdefault(alias, row)
        for event in entry.events:
            if event != _CALL:
                events.setdefault(event, row)
    refuse = reporter.refuse
    record = reporter.record
    recording = reporter.recording
    library_names = frames.library_names
    chain_needed = bool(function_rules)
    no_decision: Decision = (False, None, None)
    api = API  # captured: the closures read no module global at run time (the program can
    # rebind them through pysandboxes.guard.calls)

    def decision(function: str, names: tuple[str, ...]) -> tuple[Decision, str]:
        """The decision, and the function it is about.

        That function is the outermost known one on the stack: the one the program called
        (``subprocess.check_output``, not the ``subprocess.run`` it delegates to). Its function
        rule decides; without one, the category (or ``*``) decision of the event's function.
        A grant therefore covers what the granted function delegates to, never the reverse.
        """

        shown = function
        for name in library_names():  # innermost first
            if name in names:  # only this call's own chain (reload running os.system is not)
                shown = name
        return decided(shown, function, names), shown

    def decided(shown: str, function: str, names: tuple[str, ...]) -> Decision:
        """The decision once the outermost function on the stack is known (``shown``; the
        event's own ``function`` when none of ``names`` is there): no frame is read."""

        if chain_needed:
            rule = function_rules.get(shown)
            if rule is None and shown == function:
                for name in names:
                    rule = function_rules.get(name)
                    if rule is not None and not rule[0]:
                        break
            if rule is not None:
                return rule
        found = by_function.get(shown)
        if found is None:
            found = by_function.get(function, no_decision)
        return found

    # The functions every candidate of ``decision`` allows: the walk for the outermost one on
    # the stack cannot change the answer, and when nothing is recorded it has no other use.
    # The candidates are the function itself (nothing of its chain on the stack) and each of
    # its names that a Python frame can carry (not NATIVE_NAMES: the walk never finds those),
    # each decided by ``decided``, the same function ``decision`` ends with; function rules
    # included. pickle.find_class under python-api=ALLOW:* (one event per global an unpickler
    # loads, test_decimal's 100,000), and marshal.load under python-api=ALLOW:marshal.loads,
    # then cost a set lookup instead of a frame walk (docs/performance.md).
    all_ = all  # locals: the expression below reads no module global
    native = NATIVE_NAMES
    settled = frozenset(
        function
        for function, row in entries.items()
        if not recording
        and all_(
            decided(shown, function, row[2])[0]
            for shown in (function, *(name for name in row[2] if name not in native))
        )
    )

    def judge(function: str, category: str, detail: str | None) -> None:
        if function in settled:
            return
        row = entries.get(function)
        names = row[2] if row is not None else (function,)
        (allowed, rule, origin), shown = decision(function, names)
        fields = (("kind", "api"), ("function", shown), ("category", category))
        if allowed:
            if recording:
                record(fields)
            return
        lines = f"python-api=ALLOW:{shown}' for this function or 'python-api=ALLOW:{category}'"
        if rule is not None:
            message = (
                f"Call to {shown} (category {category}) DENIED by rule '{rule}' from {origin}; "
                f"add '{lines} for the category"
            )
        else:
            message = (
                f"Call to {shown} (category {category}) DENIED: no python-api rule allows it; "
                f"add '{lines} for the category"
            )
        if detail:
            message += f" ({detail})"
        refuse(
            "api",
            shown,
            rule,
            origin,
            f"python-api=ALLOW:{shown}",
            category,
            message,
            api,
            None,
            fields,
        )

    def allowed(function: str) -> bool:
        return by_function.get(function, no_decision)[0]

    def event_handler(function: str, category: str) -> Callable[[tuple[Any, ...]], None]:
        def handler(args: tuple[Any, ...]) -> None:
            judge(function, category, None)

        return handler

    handlers = {event: event_handler(row[0], row[1]) for event, row in events.items()}
    return CallJudge(judge=judge, allowed=allowed, handlers=handlers)


def category_of(function: str) -> str | None:
    for entry in REGISTRY:
        if function == entry.function or function in entry.aliases:
            return entry.category
    return None


__all__ = [
    "CODE_DEPUTIES",
    "FRAME_ATTRIBUTES",
    "REGISTRY",
    "RESTRICTED_ATTRIBUTES",
    "CallJudge",
    "Sensitive",
    "category_of",
    "make_call_judge",
    "precompute",
]
