"""fcntl, ioctl and flock judged by command (guard/descriptors.py, issue 18 class 3)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

CODE = """
import fcntl, os, socket, struct
def attempt(name, call):
    try:
        call()
        print(name, "ran")
    except PermissionError as exc:  # the guard's (with a denial), or the kernel's
        denial = getattr(exc, "denial", None)
        print(name, type(exc).__name__, "kernel" if denial is None else denial.kind)
    except OSError as exc:
        print(name, "OSError", exc.errno)
sock = socket.socket()
fd = os.open("data.txt", os.O_RDONLY)
r, w = os.pipe()
attempt("setown_self", lambda: fcntl.fcntl(sock.fileno(), fcntl.F_SETOWN, os.getpid()))
attempt("setown_parent", lambda: fcntl.fcntl(sock.fileno(), fcntl.F_SETOWN, os.getppid()))
attempt("setown_group", lambda: fcntl.fcntl(sock.fileno(), fcntl.F_SETOWN, -os.getpgrp()))
owner_ex = struct.pack("ii", 1, os.getppid())  # F_OWNER_PID, the parent
attempt("setown_ex_parent", lambda: fcntl.fcntl(sock.fileno(), 15, owner_ex))
attempt("setsig", lambda: fcntl.fcntl(sock.fileno(), fcntl.F_SETSIG, 9))
attempt("getfl", lambda: fcntl.fcntl(fd, fcntl.F_GETFL))
attempt("tiocsti", lambda: fcntl.ioctl(r, 0x5412, b"x"))
attempt("fiosetown", lambda: fcntl.ioctl(sock.fileno(), 0x8901, struct.pack("i", os.getppid())))
attempt("fifreeze", lambda: fcntl.ioctl(fd, 0xC0045877, 0))
attempt("fionread", lambda: fcntl.ioctl(r, 0x541B, bytes(4)))
attempt("setflags", lambda: fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0)))
attempt("lock_sh", lambda: fcntl.flock(fd, fcntl.LOCK_SH))
attempt("lock_ex", lambda: fcntl.flock(fd, fcntl.LOCK_EX))
attempt("lease", lambda: fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK))
"""


def _outcomes(tmp_path: Path, rules: str) -> dict[str, str]:
    (tmp_path / "data.txt").write_text("data\n")
    result = run_armed(CODE, rules, tmp_path)
    return dict(line.split(" ", 1) for line in result.lines if " " in line)


def test_descriptor_control_is_judged_by_command(tmp_path: Path) -> None:
    out = _outcomes(tmp_path, "expose-ro=.\npython-import=*\n")
    for name in ("setown_self", "getfl", "fionread", "lock_sh"):
        assert out[name] == "ran", (name, out)
    for name in (
        "setown_parent",
        "setown_group",
        "setown_ex_parent",
        "setsig",
        "tiocsti",
        "fiosetown",
        "fifreeze",
    ):
        assert out[name] == "RuleApiPermissionError api", (name, out)
    # Changes of the file a read-only descriptor is open on: writes of a read-only exposure.
    for name in ("setflags", "lock_ex", "lease"):
        assert out[name] == "RulePermissionError file", (name, out)


def test_descriptor_control_with_grants(tmp_path: Path) -> None:
    rules = (
        "expose-rw=.\npython-import=*\npython-api=ALLOW:fcntl.fcntl\npython-api=ALLOW:fcntl.ioctl\n"
    )
    out = _outcomes(tmp_path, rules)
    assert out["setown_parent"] == "ran", out
    assert out["setsig"] == "ran", out
    assert out["lock_ex"] == "ran", out
    # The kernel answers (no terminal on a pipe), not the guard.
    assert out["tiocsti"].startswith("OSError"), out
    assert out["fifreeze"] == "RuleApiPermissionError api", out  # privileges, not granted
