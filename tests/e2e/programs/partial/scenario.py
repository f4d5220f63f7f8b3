"""Partial mode, driven end to end: one program per provider, one JSON line per point.

Run by tests/e2e/test_partial.py as ``python scenario.py WORKDIR`` with ``OS_SANDBOX`` set; the
rule files next to it name that provider. Every point is reported as data; the test asserts.
"""

import asyncio
import contextlib
import json
import os
import pickle
import sys
import threading
import time

import pysandboxes
from pysandboxes import sandbox, sandbox_denials, sandboxes
from pysandboxes.partial.errors import PartialModeError

WORK = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
SECRET = os.path.join(WORK, "..", "secret.txt")
report = {}


def out(key, value):
    report[key] = value


# -- the functions -----------------------------------------------------------------------------


@sandbox
def read_file(path):
    with open(path) as handle:
        return handle.read()


@sandbox
def import_socket():
    import socket

    return socket.gethostname()


@sandbox
def count_and_die(counter, status):
    with open(counter, "a") as handle:
        handle.write("ran\n")
    os._exit(status)


@sandbox
def where():
    return os.getpid()


@sandbox(timeout=1)
def busy_loop():
    while True:
        pass


@sandbox
def long_sleep(seconds):
    time.sleep(seconds)
    return "woke"


@sandbox
def huge_sum():
    return sum(range(10**12))


@sandbox
async def async_sleep(seconds, marker):
    await asyncio.sleep(seconds)
    with open(marker, "w") as handle:
        handle.write("finished")
    return "done"


@sandbox
async def in_executor():
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, sum, [1, 2, 3])


@sandbox
def sleep_then(seconds):
    time.sleep(seconds)
    return seconds


#: The worker's own copy (the first function shipped with it brings it; later ones keep it):
#: what one call leaves there, a concurrent call of the same worker sees.
RENDEZVOUS = {}


@sandbox
def wait_for_other(key):
    """Runs until a concurrent call releases ``key`` (at most 20 s, so that a worker that
    never runs that call fails the test rather than its time limit): the worker must read and
    run that call while this one is still running."""

    RENDEZVOUS["waiting", key] = True
    deadline = time.monotonic() + 20
    while ("released", key) not in RENDEZVOUS:
        if time.monotonic() > deadline:
            return "never released"
        time.sleep(0.002)
    return RENDEZVOUS["released", key]


@sandbox
def is_waiting(key):
    return ("waiting", key) in RENDEZVOUS


@sandbox
def release_other(key):
    RENDEZVOUS["released", key] = "released"
    return True


@sandbox
def hold(marker, until):
    """Keeps a worker thread busy: writes ``marker``, returns once the file ``until`` exists
    (at most 60 s)."""

    with open(marker, "w") as handle:
        handle.write("running")
    deadline = time.monotonic() + 60
    while not os.path.exists(until):
        if time.monotonic() > deadline:
            return "never released"
        time.sleep(0.002)
    return "held"


@sandbox(rules=os.path.join(HERE, "json.py-sandboxes"))
def with_json(value):
    import json

    return json.dumps(value), os.getpid()


@sandbox
def without_json(value):
    import json

    return json.dumps(value)


class Multiplier:
    factor_name = "x"

    def __init__(self, factor):
        self.factor = factor

    @sandbox
    def times(self, value):
        return self.factor * value

    @staticmethod
    @sandbox
    def static_add(a, b):
        return a + b

    @sandbox
    @classmethod
    def name(cls):
        return cls.__name__ + ":" + cls.factor_name


def make_adder(offset):
    @sandbox
    def add(value):
        return value + offset + helper(0)

    return add


def helper(value):
    return value + 1


@sandbox
def big(size):
    return "x" * size


class Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


@sandbox
def hostile(path):
    return Evil(path)


@sandbox
def chatty():
    print("TOOL-OUTPUT on stdout")
    print("TOOL-ERROR on stderr", file=sys.stderr)
    return "quiet"


@sandbox
def evaluate(source):
    return eval(source)


@sandbox
def forge_frame():
    """Hostile: write a frame header claiming 1 GB straight onto the worker's socket."""
    import stat

    for fd in range(3, 256):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.write(fd, (1 << 30).to_bytes(4, "little") + b"R" + bytes(4))
        except OSError:
            pass
    time.sleep(30)


@sandbox
def inside():
    return pysandboxes.is_in_sandbox()


@sandbox
def fails():
    raise ValueError("bad value", 42)


# -- the points --------------------------------------------------------------------------------


def guarded(key, call, *args):
    try:
        out(key, {"ok": call(*args)})
    except BaseException as exc:
        out(
            key,
            {
                "error": type(exc).__name__,
                "mro": [c.__name__ for c in type(exc).__mro__],
                "message": str(exc),
                "denials": [d.to_dict() for d in sandbox_denials(exc)],
                "status": getattr(exc, "status", None),
                "remote": getattr(exc, "remote_traceback", ""),
            },
        )


try:
    read_file(SECRET)
except PartialModeError as exc:
    out("outside", type(exc).__name__)

with sandboxes() as pool:
    worker = pool.worker_for(None)
    out("control_secret", read_file.__wrapped__(SECRET))
    guarded("secret", lambda: read_file(SECRET))
    guarded("import", import_socket)
    guarded("exception", fails)
    out("control_eval", evaluate.__wrapped__("6 * 7"))
    guarded("eval", lambda: evaluate("6 * 7"))

    counter = os.path.join(WORK, "counter.txt")
    before = worker.restarts
    guarded("crash", lambda: count_and_die(counter, 7))
    runs = 0
    if os.path.exists(counter):
        with open(counter) as handle:
            runs = handle.read().count("ran")
    out("crash_runs", runs)
    guarded("after_crash", where)
    out("restarts_after_crash", worker.restarts - before)

    start = time.monotonic()
    guarded("busy", busy_loop)
    out("busy_seconds", time.monotonic() - start)
    start = time.monotonic()
    guarded("sleep_timeout", lambda: worker.call(long_sleep.__wrapped__, (30,), timeout=0.5))
    out("sleep_seconds", time.monotonic() - start)
    start = time.monotonic()
    guarded("sum_timeout", lambda: worker.call(huge_sum.__wrapped__, (), timeout=0.5))
    out("sum_seconds", time.monotonic() - start)
    guarded("after_timeouts", where)

    marker = os.path.join(WORK, "cancelled-marker")

    async def cancel_one():
        task = asyncio.ensure_future(async_sleep(1.5, marker))
        await asyncio.sleep(0.5)
        pid = worker.pid  # the worker running the call (a timed-out one was replaced)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        # killed, and reaped: until then a killed process still answers kill(pid, 0)
        killed = False
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                killed = True
                break
            await asyncio.sleep(0.05)
        return {"cancelled": task.cancelled(), "killed": killed}

    guarded("cancel", lambda: asyncio.run(cancel_one()))
    time.sleep(1.5)
    out("cancel_marker", os.path.exists(marker))

    where()  # a worker is running again
    start = time.monotonic()
    threads = [threading.Thread(target=sleep_then, args=(0.3,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out("sync_concurrency_seconds", time.monotonic() - start)

    # A call that waits for a concurrent call: the second must run while the first runs (a
    # worker whose reader ran its call before letting anyone read the next would hang here).
    waiter = threading.Thread(target=guarded, args=("waits_for_other", wait_for_other, "one"))
    waiter.start()
    polls = 0
    while not is_waiting("one") and polls < 30_000:  # each poll is a concurrent call too
        polls += 1
        time.sleep(0.002)
    guarded("releases_other", release_other, "one")
    waiter.join()

    # The same two calls reaching the worker together: every one of its threads is held busy
    # while both are sent, so that the first thread set free reads both frames at once. It
    # runs the first, which waits for the second: another thread must be woken for that one.
    until = os.path.join(WORK, "release-holders")
    markers = [os.path.join(WORK, f"holder-{i}") for i in range(worker.threads)]
    holders = [
        threading.Thread(target=guarded, args=(f"holder_{i}", hold, marker, until))
        for i, marker in enumerate(markers)
    ]
    for thread in holders:
        thread.start()
    deadline = time.monotonic() + 60
    while not all(map(os.path.exists, markers)) and time.monotonic() < deadline:
        time.sleep(0.005)
    pair = [
        threading.Thread(target=guarded, args=("batched_waits", wait_for_other, "two")),
        threading.Thread(target=guarded, args=("batched_releases", release_other, "two")),
    ]
    for thread in pair:
        thread.start()
    while len(worker._pending) < worker.threads + 2 and time.monotonic() < deadline:
        time.sleep(0.005)  # both frames are sent (the calls are in flight)
    out("batched_sent_while_held", len(worker._pending) == worker.threads + 2)
    with open(until, "w"):
        pass
    for thread in holders + pair:
        thread.join()
    out("holders", [report.pop(f"holder_{i}") for i in range(worker.threads)])

    async def eight():
        marks = [os.path.join(WORK, f"m{i}") for i in range(8)]
        return await asyncio.gather(*(async_sleep(0.3, m) for m in marks))

    start = time.monotonic()
    guarded("async_concurrency", lambda: asyncio.run(eight()))
    out("async_concurrency_seconds", time.monotonic() - start)

    guarded("executor", lambda: asyncio.run(in_executor()))

    guarded("profile_json", lambda: with_json([1, 2]))
    guarded("profile_default", lambda: without_json([1, 2]))
    where()
    out("profile_workers", len({w.pid for w in pool.workers.values()}))

    guarded("method", lambda: Multiplier(3).times(4))
    guarded("static", lambda: Multiplier.static_add(2, 3))
    guarded("classmethod", Multiplier.name)
    guarded("nested", lambda: make_adder(10)(5))

    evil_marker = os.path.join(WORK, "evil-marker")
    guarded("hostile", lambda: hostile(evil_marker))
    out("hostile_marker", os.path.exists(evil_marker))
    control_marker = os.path.join(WORK, "control-marker")
    pickle.loads(pickle.dumps(Evil(control_marker)))
    out("hostile_control", os.path.exists(control_marker))

    guarded("forged", forge_frame)
    guarded("after_forged", where)
    guarded("chatty", chatty)
    guarded("is_in_sandbox", lambda: pysandboxes.is_in_sandbox())
    guarded("is_in_sandbox_worker", inside)

try:
    with sandboxes(max_result=1000):
        guarded("big_small", lambda: len(big(100)))
        guarded("big", lambda: big(5000))
        with sandboxes(max_result=1000):
            guarded("nested_same", lambda: len(big(10)))
        try:
            with sandboxes(os.path.join(HERE, "json.py-sandboxes")):
                pass
        except PartialModeError as exc:
            out("nested_other", type(exc).__name__)
except Exception as exc:
    out("max_result_context", repr(exc))

sys.stdout.write(json.dumps(report) + "\n")
