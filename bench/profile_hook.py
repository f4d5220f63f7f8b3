"""Where the Python layer's time goes on a real run: a profiler over the audit hook.

Runs ``python-sb ARGS`` *in this process* with ``OS_SANDBOX=none`` (the rule file must choose
its provider as ``os-sandbox=${OS_SANDBOX:-...}``, as learned files do): the same
``guard.arm`` as every provider's child, without a second interpreter to reach. It reports
one of:

``--mode events`` (default)
    every audit event the run raised, by kind: how many, whether they reached a handler, and
    the time spent in their handler (``perf_counter_ns`` around it, see ``_time_handlers``;
    the body's dispatch around it -- the table look-up, the collector's switches, the safe
    point -- is not counted: some 0.3-0.5 us an event, handled or not, shown as 0 for the
    events without a handler). Events raised *while the hook runs* (the guard's
    own ``id()``, ``f_code`` reads, ``sys._getframe``) re-enter the hook: they are listed as
    ``nested EVENT``, and each figure is exclusive (an event's time without its nested
    events'). One stack for all threads: a run whose threads raise events at the same time
    mixes their nesting (the suites profiled here are single-threaded). ``object.__getattr__``
    is listed by attribute name.
    With ``--detail``, a file event's row is split by its first argument (type, ``w`` for an
    ``open`` that writes, ``dir_fd``, the first two components of a ``str`` path) and a
    ``compile`` by its file name. With ``--no-gc`` the cyclic collector is off for the whole
    run: a collection is then not counted in the time of whichever event's allocation
    triggered it (with it on, the cheapest events show tens of microseconds now and then).
``--mode cprofile``
    a cProfile of the whole run, started before the guard is armed, printed for the guard's
    own functions (``pysandboxes/guard``, the hook's handlers by name) and the wrappers, sorted
    by their own time. cProfile adds its own cost to every Python call, which inflates the
    many small handlers: read it for *which* functions, and ``events`` for *how much*.
    CPython does not profile inside an audit hook unless the hook says it may be traced (an
    attribute ``__cantrace__`` that is true): without ``--in-hook`` the handlers' time is
    charged to the code whose event called them, and they do not appear. ``--in-hook`` sets
    that attribute on the guard's hook as it is added, and for that runs the pure-Python hook
    (``PYSANDBOXES_ACCELERATOR=off``: the compiled gate takes no attribute): the handlers and
    everything they call are then in the report, each under its own name.

Usage (from the directory the program runs in; the rule file is found as usual)::

    .venv/bin/python bench/profile_hook.py -- -m pytest -q tests/
    .venv/bin/python bench/profile_hook.py --no-gc --detail -- -m test test_pathlib
    .venv/bin/python bench/profile_hook.py --mode cprofile --top 40 -- -m pytest -q tests/
    .venv/bin/python bench/profile_hook.py --mode cprofile --in-hook -- -m test test_pathlib

The report goes to the standard error at exit. For development only: nothing of python-sb
imports this file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

_TIMED_SOURCE = """
def make_timed_get(get, counts, clock, stack, type_, str_, detail):
    cache = {}

    def timed_get(event):
        handler = get(event)
        if handler is None:
            key = ("nested " + event) if stack else event
            entry = counts.get(key)
            if entry is None:
                entry = counts[key] = [0, 0, False]
            entry[0] += 1
            return None
        timed = cache.get(event)
        if timed is None or timed[0] is not handler:

            def run(args, handler=handler, event=event):
                nested = stack != []
                stack.append(0)
                start = clock()
                try:
                    handler(args)
                finally:
                    spent = clock() - start
                    inner = stack.pop()
                    if stack:
                        stack[-1] += spent
                    key = ("nested " + event) if nested else event
                    if event == "object.__getattr__" and len(args) > 1 and type_(args[1]) is str_:
                        key = key + " ." + args[1]
                    elif detail is not None:
                        key = key + detail(event, args)
                    entry = counts.get(key)
                    if entry is None:
                        entry = counts[key] = [0, 0, True]
                    entry[0] += 1
                    entry[1] += spent - inner

            timed = cache[event] = (handler, run)
        return timed[1]

    return timed_get
"""


def _detail_of(event: str, args: tuple[Any, ...]) -> str:
    """``--detail``: the file name of a ``compile`` (``<...>`` as given, else whether the
    source is text or bytes); what a file event's first argument is (its type, ``w`` for an
    ``open`` that writes, ``dir_fd`` for an ``os.*`` event with one, the first two components
    of a ``str`` path, ``rel`` for a relative one), so that the slow cases of one event kind
    show apart. Runs inside the hook: nothing here may raise an audited event."""

    if event == "compile" and len(args) > 1:  # (source, filename): the filename's kind
        name = args[1]
        if type(name) is str and name.startswith("<"):
            return f" [{name[:24]}]"
        return f" [{type(args[0]).__name__} source, file]"
    if not (event == "open" or event.startswith("os.")) or not args:
        return ""
    first = args[0]
    kind = type(first)
    text = ""
    if kind is str:
        text = " " + "/".join(first.split("/")[:3]) if first.startswith("/") else " rel"
    write = ""
    if event == "open" and len(args) > 2 and type(args[2]) is int and args[2] & 0o3103:
        write = " w"
    fd = ""
    if event.startswith("os.") and len(args) > 1 and type(args[-1]) is int and args[-1] >= 0:
        fd = " dir_fd"
    return f" [{kind.__name__}{write}{fd}{text}]"


def _time_handlers(
    counts: dict[str, list[int]],
    hook_module: Any,
    detail: Callable[[str, tuple[Any, ...]], str] | None,
) -> None:
    """Have ``hook.install`` give its hook a ``get`` that times every handler by event kind.

    ``install`` builds the hook as ``_functools.partial(hook body, get, ...)``; for that one
    call, the partial is given ``timed_get`` instead of ``get`` (``_functools.partial`` is put
    back at once). ``timed_get`` is called *by* the hook's body, so no frame of the profiler
    stands between the body and the program: the body's safe point (``signals.safe``: no
    guard frame below it) and the frame walks (``frames.below_hook``) see the stack they see
    without the profiler. (An earlier version wrapped the body itself: its frame, a guard
    frame below the body, made every safe point fail, and the frames the guard releases then
    waited through whole test modules, each event paying a walk of the stack.) The handler
    wrappers carry ``hook.py``'s file name and globals, so that the guard takes their frames
    for its own."""

    import _functools  # type: ignore[import-not-found]

    namespace = hook_module.__dict__
    exec(compile(_TIMED_SOURCE, hook_module.__file__, "exec"), namespace)
    make_timed_get = namespace.pop("make_timed_get")
    body_code = hook_module._hook_body.__code__
    real_partial = _functools.partial

    def partial(function: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(function, "__code__", None) is body_code and args:
            _functools.partial = real_partial
            timed = make_timed_get(args[0], counts, time.perf_counter_ns, [], type, str, detail)
            args = (timed, *args[1:])
        return real_partial(function, *args, **kwargs)

    _functools.partial = partial


def _report_events(counts: dict[str, list[int]], wall: list[float]) -> None:
    total_ns = sum(entry[1] for entry in counts.values())
    total_n = sum(entry[0] for entry in counts.values())
    elapsed = time.perf_counter() - wall[0]
    out = sys.__stderr__ or sys.stderr
    out.write(
        f"\n== audit hook: {total_n} events, {total_ns / 1e6:.1f} ms in the hook "
        f"({100 * total_ns / 1e9 / elapsed:.1f}% of {elapsed:.2f} s)\n"
        f"{'event':<32} {'count':>8} {'handled':>8} {'ms':>9} {'us/event':>9} {'share':>6}\n"
    )
    for event, (n, ns, handled) in sorted(counts.items(), key=lambda kv: -kv[1][1]):
        share = 100 * ns / total_ns if total_ns else 0.0
        out.write(
            f"{event:<32} {n:>8} {'yes' if handled else 'no':>8} {ns / 1e6:>9.2f} "
            f"{ns / n / 1000 if handled else 0:>9.2f} {share:>5.1f}%\n"
        )
    out.flush()


def _report_cprofile(profiler: Any, top: int, pstats: Any) -> None:
    """Print the profile (``pstats`` imported before the guard was armed, which judges an
    ``import`` statement at exit as the program's)."""

    # Not disable(): that is sys.setprofile, refused by the guard (introspection). The
    # profiler keeps running while the report is printed.
    profiler.snapshot_stats()

    class Snapshot:
        stats = profiler.stats

        def create_stats(self) -> None:
            pass

    stats = pstats.Stats(Snapshot(), stream=sys.__stderr__ or sys.stderr)
    guard = os.sep + os.path.join("pysandboxes", "guard") + os.sep
    stats.sort_stats("tottime")
    out = sys.__stderr__ or sys.stderr
    out.write("\n== cProfile, python-sb's guard functions by own time\n")
    stats.print_stats(guard.replace(os.sep, "/"), top)
    out.write("\n== cProfile, the whole run by own time\n")
    stats.print_stats(top)
    out.flush()


def _traceable_hooks() -> None:
    """Every audit hook added from now on marked traceable (``__cantrace__``), so that a
    profiler sees the calls made inside it; the guard's pure-Python hook is chosen (the
    compiled gate takes no attribute)."""

    os.environ["PYSANDBOXES_ACCELERATOR"] = "off"
    add = sys.addaudithook

    def add_traceable(hook: Any) -> None:
        try:
            hook.__cantrace__ = True
        except (AttributeError, TypeError):
            sys.stderr.write(f"profile_hook: {hook!r} cannot be marked traceable\n")
        add(hook)

    sys.addaudithook = add_traceable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--mode", choices=("events", "cprofile"), default="events")
    parser.add_argument("--top", type=int, default=30, help="rows of the cProfile report")
    parser.add_argument(
        "--detail",
        action="store_true",
        help="events mode: file events apart by argument type, write, dir_fd and path prefix; "
        "compile by file name",
    )
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="the cyclic collector off for the whole run, so that a collection is not "
        "counted in the time of the event whose allocation triggered it",
    )
    parser.add_argument(
        "--in-hook",
        action="store_true",
        help="cprofile mode: profile inside the audit hook too (the pure-Python hook, made "
        "traceable), so that the handlers are in the report",
    )
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then python-sb's arguments")
    options = parser.parse_args(argv)
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    import atexit

    import pysandboxes.guard.hook as hook_module
    from pysandboxes.launch import cli

    wall = [time.perf_counter()]
    if options.no_gc:
        import gc

        gc.disable()
    if options.mode == "events":
        counts: dict[str, list[int]] = {}
        _time_handlers(counts, hook_module, _detail_of if options.detail else None)
        # Registered before the program's: runs after them, still inside the armed run.
        atexit.register(_report_events, counts, wall)
    else:
        import cProfile
        import pstats

        if options.in_hook:
            _traceable_hooks()
        profiler = cProfile.Profile()
        atexit.register(_report_cprofile, profiler, options.top, pstats)
        profiler.enable()
    os.environ["OS_SANDBOX"] = "none"
    return cli.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
