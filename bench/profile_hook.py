"""Where the Python layer's time goes on a real run: a profiler over the audit hook.

Runs ``python-sb ARGS`` *in this process* with ``OS_SANDBOX=none`` (the rule file must choose
its provider as ``os-sandbox=${OS_SANDBOX:-...}``, as learned files do): the same
``guard.arm`` as every provider's child, without a second interpreter to reach. It reports
one of:

``--mode events`` (default)
    every audit event the run raised, by kind: how many, how many reached a handler, and the
    time spent in the hook for them (``perf_counter_ns`` around the hook's body, which the
    guard installs as its one audit hook; the wrapper adds about 0.1 us per event, the same for
    every kind, not counted in the figures). Events raised *while the hook runs* (the guard's
    own ``id()``, ``f_code`` reads, ``sys._getframe``) re-enter the hook: they are listed as
    ``nested EVENT``, and each figure is exclusive (an event's time without its nested
    events'). One stack for all threads: a run whose threads raise events at the same time
    mixes their nesting (the suites profiled here are single-threaded). ``object.__getattr__``
    is listed by attribute name.
``--mode cprofile``
    a cProfile of the whole run, started before the guard is armed, printed for the guard's
    own functions (``pysandboxes/guard``, the hook's handlers by name) and the wrappers, sorted
    by their own time. cProfile adds its own cost to every Python call, which inflates the
    many small handlers: read it for *which* functions, and ``events`` for *how much*.

Usage (from the directory the program runs in; the rule file is found as usual)::

    .venv/bin/python bench/profile_hook.py -- -m pytest -q tests/
    .venv/bin/python bench/profile_hook.py --mode cprofile --top 40 -- -m pytest -q tests/

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
def timed_hook_body(*args, _counts=None, _original=None, _clock=None, _stack=None):
    event = args[-2]
    nested = bool(_stack)
    _stack.append(0)
    start = _clock()
    try:
        _original(*args)
    finally:
        spent = _clock() - start
        inner = _stack.pop()
        if _stack:
            _stack[-1] += spent
        key = ("nested " + event) if nested else event
        if event == "object.__getattr__" and type(args[-1][1]) is str:
            key = key + " ." + args[-1][1]
        entry = _counts.get(key)
        if entry is None:
            entry = _counts[key] = [0, 0, args[0](event) is not None]
        entry[0] += 1
        entry[1] += spent - inner
"""


def _timed_hook_body(
    counts: dict[str, list[int]], original: Callable[..., None], hook_module: Any
) -> Callable[..., None]:
    """A stand-in for ``guard.hook._hook_body`` that times every call by event kind
    (``args[0]`` is the hook's ``get``: whether the event has a handler).

    Its code carries ``hook.py``'s file name and runs in that module's globals, so that the
    guard takes its frame for one of its own (``guard/frames.py``): a frame of this file
    below the hook would be taken for the program's, the caller of every event."""

    namespace = hook_module.__dict__
    exec(compile(_TIMED_SOURCE, hook_module.__file__, "exec"), namespace)
    body = namespace.pop("timed_hook_body")
    body.__kwdefaults__ = {
        "_counts": counts,
        "_original": original,
        "_clock": time.perf_counter_ns,
        "_stack": [],
    }
    return body  # type: ignore[no-any-return]


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
            f"{ns / n / 1000:>9.2f} {share:>5.1f}%\n"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--mode", choices=("events", "cprofile"), default="events")
    parser.add_argument("--top", type=int, default=30, help="rows of the cProfile report")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then python-sb's arguments")
    options = parser.parse_args(argv)
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    import atexit

    import pysandboxes.guard.hook as hook_module
    from pysandboxes.launch import cli

    wall = [time.perf_counter()]
    if options.mode == "events":
        counts: dict[str, list[int]] = {}
        hook_module._hook_body = _timed_hook_body(  # type: ignore[assignment]
            counts, hook_module._hook_body, hook_module
        )
        # Registered before the program's: runs after them, still inside the armed run.
        atexit.register(_report_events, counts, wall)
    else:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        atexit.register(_report_cprofile, profiler, options.top, pstats)
        profiler.enable()
    os.environ["OS_SANDBOX"] = "none"
    return cli.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
