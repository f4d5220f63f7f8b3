"""Killing an eval worker in a test and waiting until it has really ended.

``WORKER.pid`` gives the process the host holds: for a spawned worker, the provider's outer
process. Under the ``pid-namespace`` tree (``launch/spawn.py``) that is the holder of the
worker's namespace, whose death reaches the namespace's PID 1 by ``PR_SET_PDEATHSIG`` and then,
once that PID 1 has run its own exit, the worker. Until then the worker still serves its
channel. Waiting for the outer process alone therefore let a killed worker answer one more
request (seen under ``pytest -n 2`` at load 2-5: the holder a zombie, PID 1 still running, the
worker asleep in its read), and a next call made right after the kill could reach a worker
that died a moment later. :func:`kill_tree` waits for every process of the tree.
"""

from __future__ import annotations

import os
import signal
import time


def _start_time(pid: int) -> str | None:
    """The start time of ``pid`` (``/proc/PID/stat`` field 22), ``None`` once it has ended:
    with it a PID given to a new process later is not taken for the old one."""

    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def _tree(pid: int) -> list[tuple[int, str]]:
    """``pid`` and every process under it, each with its start time (children as the kernel
    lists them for each thread, ``/proc/PID/task/TID/children``)."""

    found: list[tuple[int, str]] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        started = _start_time(current)
        if started is None:
            continue
        found.append((current, started))
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    todo.extend(int(child) for child in handle.read().split())
            except OSError:
                pass
    return found


def _ended(pid: int, started: str) -> bool:
    """Whether the process ``pid`` that started at ``started`` has ended, every thread of it
    (its descriptors are closed when the last one exits; the first thread shows as a zombie
    before the others are gone)."""

    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        if fields[19] != started:
            return True  # the PID is another process's now
        return fields[0] in ("Z", "X") and os.listdir(f"/proc/{pid}/task") == [str(pid)]
    except OSError:
        return True


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` (what ``WORKER.pid`` gives) and wait until it and every process
    under it, recorded before the kill, have ended (see the module docstring)."""

    members = _tree(pid)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all(_ended(member, started) for member, started in members):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} or one under it still runs 30 s after SIGKILL")


def wait_ended(pid: int, seconds: float = 30) -> bool:
    """Wait until the process ``pid``, as it is now, has ended, every thread of it (a worker
    ending by itself: nobody kills it); whether it did within ``seconds``."""

    started = _start_time(pid)
    if started is None:
        return True
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _ended(pid, started):
            return True
        time.sleep(0.05)
    return _ended(pid, started)
