"""Partial mode: the API's edges (learning, the lock, complete mode, errors), through real
programs and workers (``os-sandbox=subprocess``: these points do not depend on the provider;
test_partial.py runs the provider matrix)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from tests.helpers import PYTHON, base_env, run_sb

HEADER = """
import json, sys
from pysandboxes import sandbox, sandboxes, sandbox_denials, SandBoxError
from pysandboxes.errors import ConfigError
from pysandboxes.partial.errors import PartialModeError
"""


def run_program(
    tmp_path: Path, body: str, *args: str, header: str = HEADER
) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "app.py"
    program.write_text(header + textwrap.dedent(body))
    return subprocess.run(
        [PYTHON, str(program), *args],
        cwd=tmp_path,
        env=base_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_pysandboxes_stays_light(tmp_path: Path) -> None:
    proc = run_program(
        tmp_path,
        """
        import sys
        import pysandboxes
        heavy = {"threading", "asyncio", "pickle", "socket", "concurrent.futures"}
        print(sorted(heavy & set(sys.modules)))
        print(pysandboxes.sandbox.__module__)
        """,
        header="",
    )
    # Partial mode's machinery loads on first use of its names, not with the package.
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "pysandboxes.partial.api"]


def test_learning_writes_what_the_functions_did(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "input.txt").write_text("hello")
    learned = tmp_path / "learned.py-sandboxes"
    proc = run_program(
        tmp_path,
        """
        @sandbox
        def read(path):
            import json
            with open(path) as handle:
                return json.dumps(handle.read())

        with sandboxes(learn=sys.argv[1]):
            print(read(sys.argv[2]))
        """,
        str(learned),
        str(data / "input.txt"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '"hello"'
    rules = learned.read_text().splitlines()
    assert "python-import=json" in rules
    assert any(line.startswith("expose-ro=") for line in rules), rules


def test_learning_and_keyword_rules_are_refused_under_the_lock(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("learn=false\nos-sandbox=subprocess\n")
    proc = run_program(
        tmp_path,
        """
        @sandbox
        def f():
            return 1

        for options in ({"learn": True}, {"python_import": "json"}):
            try:
                with sandboxes(**options):
                    f()
            except ConfigError as exc:
                print("refused", "learn=false" in str(exc))
        with sandboxes():
            print("plain", f())
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["refused True", "refused True", "plain 1"]


def test_under_python_sb_a_marked_function_is_a_plain_call(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text(
        "os-sandbox=subprocess\nexpose-ro=.\npython-import=os,pysandboxes\n"
    )
    program = tmp_path / "complete.py"
    program.write_text(
        textwrap.dedent(
            """
            import os
            from pysandboxes import sandbox, is_in_sandbox

            @sandbox
            def where():
                return os.getpid()

            print(is_in_sandbox(), where() == os.getpid())
            """
        )
    )
    proc = run_sb([str(program)], cwd=tmp_path, env=base_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True True"


def test_bad_options_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("os-sandbox=subprocess\n")
    (tmp_path / "none.py-sandboxes").write_text("os-sandbox=none\n")
    proc = run_program(
        tmp_path,
        """
        import threading

        LOCK = threading.Lock()

        @sandbox
        def uses_lock():
            return LOCK.locked()

        def negative():
            @sandbox(timeout=-1)
            def function():
                return 1

        @sandbox
        def takes(value):
            return value

        def attempt(name, call):
            try:
                call()
            except SandBoxError as exc:
                print(name, type(exc).__name__)

        attempt("none", lambda: sandboxes("none.py-sandboxes").__enter__())
        attempt("threads", lambda: sandboxes(threads=0).__enter__())
        attempt("returns", lambda: sandboxes(returns="everything").__enter__())
        attempt("unknown", lambda: sandboxes(not_a_key="x").__enter__())
        with sandboxes():
            attempt("unpicklable", uses_lock)
            attempt("negative", negative)
            attempt("argument", lambda: takes(threading.Lock()))
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "none",
        "ConfigError",
        "threads",
        "PartialModeError",
        "returns",
        "PartialModeError",
        "unknown",
        "ConfigError",
        "unpicklable",
        "PartialModeError",
        "negative",
        "PartialModeError",
        "argument",
        "PartialModeError",
    ]


def test_returns_option_accepts_named_classes_and_objects(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text(
        "os-sandbox=subprocess\npython-import=datetime,decimal,uuid,pathlib\n"
    )
    proc = run_program(
        tmp_path,
        """
        import datetime, decimal, uuid, pathlib

        class Point:
            def __init__(self, x):
                self.x = x

        @sandbox
        def data():
            return {"when": datetime.date(2026, 12, 1), "d": decimal.Decimal("1.5"),
                    "u": uuid.UUID(int=1), "p": pathlib.PurePosixPath("/a"), "s": {1, 2}}

        @sandbox
        def point():
            return Point(3)

        @sandbox(returns=[Point])
        def point_allowed():
            return Point(4)

        with sandboxes():
            print(sorted(data()))
            try:
                point()
            except SandBoxError as exc:
                print(type(exc).__name__)
            print(point_allowed().x)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["['d', 'p', 's', 'u', 'when']", "UnsafeResultError", "4"]


def test_run_with_init_fn_prepares_each_worker(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("os-sandbox=subprocess\n")
    proc = run_program(
        tmp_path,
        """
        import pysandboxes

        STATE = {"ready": False, "calls": 0}

        def setup():
            STATE["ready"] = True

        @sandbox
        async def state():
            STATE["calls"] += 1
            return dict(STATE)

        async def main():
            return [await state(), await state()]

        print(json.dumps(pysandboxes.run(main(), init_fn=setup)))
        print(json.dumps(STATE))
        """,
    )
    assert proc.returncode == 0, proc.stderr
    inside, outside = proc.stdout.splitlines()
    # init_fn ran in the worker, whose module state lives on between calls; the caller's own
    # STATE is untouched.
    assert json.loads(inside) == [{"ready": True, "calls": 1}, {"ready": True, "calls": 2}]
    assert json.loads(outside) == {"ready": False, "calls": 0}


def test_fresh_workers_and_async_timeouts(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("os-sandbox=subprocess\npython-import=asyncio\n")
    proc = run_program(
        tmp_path,
        """
        import asyncio, time
        from pysandboxes.partial.errors import CallTimeoutError

        COUNTER = [0]

        @sandbox(fresh=True)
        def bump_fresh():
            COUNTER[0] += 1
            return COUNTER[0]

        @sandbox
        def bump():
            COUNTER[0] += 1
            return COUNTER[0]

        @sandbox(timeout=0.5)
        async def forever():
            await asyncio.sleep(30)

        with sandboxes():
            print(bump_fresh(), bump_fresh(), bump(), bump())
            start = time.monotonic()
            try:
                asyncio.run(forever())
            except CallTimeoutError:
                print("timeout", time.monotonic() - start < 10)
            print(bump())  # a new worker: its own COUNTER again
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["1 1 1 2", "timeout True", "1"]


def test_worker_entry_point_for_other_packages(tmp_path: Path) -> None:
    (tmp_path / "eval.py-sandboxes").write_text("os-sandbox=subprocess\n")
    proc = run_program(
        tmp_path,
        """
        from pysandboxes.partial.pool import Worker
        from pysandboxes.partial.errors import CallTimeoutError

        with Worker("eval.py-sandboxes", max_restarts=5, threads=2) as worker:
            # python-sb's own function, by reference (imported as library code in the worker)
            print(worker.call(sandbox_denials, (None,)))
            # a lambda, by value
            print(worker.call(lambda a, b: a * b, (6, 7)))
            try:
                worker.call(lambda: sum(range(10**12)), timeout=0.5)
            except CallTimeoutError:
                print("timeout", worker.restarts)
            print(worker.call(len, ("abc",)), worker.restarts)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "42", "timeout 0", "3 1"]


def test_restart_budget_is_visible_and_bounded(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("os-sandbox=subprocess\npython-import=os\n")
    proc = run_program(
        tmp_path,
        """
        import os
        from pysandboxes.partial.errors import RestartBudgetExceeded, WorkerDiedError

        @sandbox
        def die():
            os._exit(3)

        with sandboxes(max_restarts=1) as pool:
            for _ in range(3):
                try:
                    die()
                except WorkerDiedError as exc:
                    print("died", exc.status, pool.worker_for(None).restarts)
                except RestartBudgetExceeded:
                    print("budget", pool.worker_for(None).restarts)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["died 3 0", "died 3 1", "budget 1"]


def test_learning_sees_the_child_processes_of_a_sandboxed_function(tmp_path: Path) -> None:
    # The worker's threads start after learning's seccomp hand-over, so the processes a
    # function starts from them are observed too.
    data = tmp_path / "data"
    data.mkdir()
    (data / "f.txt").write_text("hi\n")
    learned = tmp_path / "learned.py-sandboxes"
    proc = run_program(
        tmp_path,
        """
        import subprocess

        @sandbox
        def cat(path):
            return subprocess.run(["cat", path], capture_output=True, text=True).stdout

        with sandboxes(learn=sys.argv[1]):
            print(cat(sys.argv[2]).strip())
        """,
        str(learned),
        str(data / "f.txt"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "hi"
    rules = learned.read_text().splitlines()
    assert any(line.startswith("expose-ro=") and line.endswith("/cat") for line in rules), rules
    assert "they ran cat" in proc.stderr


def test_an_interrupted_sync_call_stops_with_its_worker(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text(
        "os-sandbox=subprocess\nexpose-rw=.\npython-import=time\n"
    )
    marker, control = tmp_path / "finished", tmp_path / "control"
    proc = run_program(
        tmp_path,
        """
        import os, signal, threading, time

        @sandbox
        def slow(path, seconds):
            time.sleep(seconds)
            open(path, "w").close()

        @sandbox
        def quick():
            return "quick"

        with sandboxes() as pool:
            slow(sys.argv[2], 0)  # the control: uninterrupted, it writes its file
            threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
            try:
                slow(sys.argv[1], 2)
            except KeyboardInterrupt:
                print("interrupted")
            print(quick(), pool.worker_for(None).restarts)
            time.sleep(2.5)
        """,
        str(marker),
        str(control),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["interrupted", "quick 1"]
    assert control.exists()
    assert not marker.exists()  # the function never finished: its worker was killed


def test_a_worker_that_cannot_start_is_an_error_at_entry(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("os-sandbox=subprocess\n")
    proc = run_program(
        tmp_path,
        """
        from pysandboxes.partial.errors import WorkerDiedError

        @sandbox
        def f():
            return 1

        def setup():
            raise ValueError("init failed")

        # An interpreter that cannot start (a bad env= rule), an init_fn that fails.
        for options in ({"env": "PYTHONHOME=/nonexistent"}, {"init_fn": setup}):
            try:
                with sandboxes(**options):
                    print("entered")
            except WorkerDiedError as exc:
                print("not started", exc.status)
            except ValueError as exc:
                print("init", exc)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["not started 1", "init init failed"]
