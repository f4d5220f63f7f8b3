"""Change a host process of the same user from inside: its resource limits, priority, CPU
affinity, scheduling policy or I/O priority. argv: HOW PID, HOW one of ``prlimit``,
``setpriority``, ``affinity``, ``scheduler``, ``ioprio``. Reached when the change reads back."""

import os
import resource
import sys
from _verdict import attempt, libc, raise_errno

HOW, PID = sys.argv[1], int(sys.argv[2])
IOPRIO_WHO_PROCESS, IOPRIO_IDLE = 1, 3 << 13
NR = {"x86_64": {"ioprio_set": 251, "ioprio_get": 252}, "aarch64": {"ioprio_set": 30, "ioprio_get": 31}}


def ioprio(name, *args):
    result = libc().syscall(NR[os.uname().machine][name], *args)
    if result < 0:
        raise_errno()
    return result


def change():
    if HOW == "prlimit":
        hard = resource.prlimit(PID, resource.RLIMIT_NOFILE)[1]
        resource.prlimit(PID, resource.RLIMIT_NOFILE, (77, hard))
        return resource.prlimit(PID, resource.RLIMIT_NOFILE)[0] == 77
    if HOW == "setpriority":
        os.setpriority(os.PRIO_PROCESS, PID, 19)
        return os.getpriority(os.PRIO_PROCESS, PID) == 19
    if HOW == "affinity":
        os.sched_setaffinity(PID, {0})
        return os.sched_getaffinity(PID) == {0}
    if HOW == "scheduler":
        os.sched_setscheduler(PID, os.SCHED_BATCH, os.sched_param(0))
        return os.sched_getscheduler(PID) == os.SCHED_BATCH
    if HOW == "ioprio":
        ioprio("ioprio_set", IOPRIO_WHO_PROCESS, PID, IOPRIO_IDLE)
        return ioprio("ioprio_get", IOPRIO_WHO_PROCESS, PID) == IOPRIO_IDLE
    raise SystemExit(f"unknown way {HOW}")


attempt("process_" + HOW, lambda: "CHANGED" if change() else "unchanged", secret="CHANGED")
