"""Survey of issue 18's bypass classes on the running CPython (run it under 3.11, 3.12, 3.13).

Plain python3, no sandbox: for each class, which standard-library entry points belong to it on
this interpreter, found by trying them under an audit hook that records the events raised.
Each line says what was tried and what CPython did; docs/security-model.md summarises the
results. Nothing outside a private temporary directory is changed.

    python3 scripts/survey_bypass_classes.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

EVENTS: list[tuple[str, tuple[object, ...]]] = []


def hook(event: str, args: tuple[object, ...]) -> None:
    if not event.startswith(("object.", "sys._getframe", "import", "exec", "compile", "marshal")):
        EVENTS.append((event, args))


def events_of(call: object) -> list[str]:
    EVENTS.clear()
    try:
        call()  # type: ignore[operator]
        outcome = "ran"
    except Exception as exc:
        outcome = type(exc).__name__
    seen = sorted({event for event, _ in EVENTS})
    return [outcome, *seen]


def report(label: str, found: list[str]) -> None:
    print(f"  {label:48} {found[0]:18} events: {', '.join(found[1:]) or 'NONE'}")


def embedded_interpreters(tmp: str) -> None:
    print("1. embedded interpreters")
    try:
        import _tkinter
    except ImportError:
        print("  _tkinter: not built")
        return
    app = _tkinter.create(None, "survey", "Tk", 0, 0, 0, 0, None)
    for script in ("exec true", f"close [open {tmp}/tcl_made w]", "glob /*", "pwd", "cd ."):
        report(f"tcl: {script.split()[0]} ...", events_of(lambda s=script: app.eval(s)))
    commands = set(app.eval("info commands").split())
    risky = sorted(commands & {"exec", "open", "socket", "file", "glob", "cd", "load", "source"})
    print(f"  tcl commands reaching the system: {' '.join(risky)}")


def mode_string_events(tmp: str) -> None:
    print("2. open events with the mode as a string and flags 0")
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    EVENTS.clear()
    context.keylog_filename = os.path.join(tmp, "keylog")
    for event, args in EVENTS:
        if event == "open":
            print(f"  ssl keylog_filename: open{args!r}")
    library = None
    for name in os.listdir(os.path.join(sys.base_prefix, "lib")):
        if name.startswith("libpython") and name.endswith(".so.1.0"):
            library = os.path.join(sys.base_prefix, "lib", name)
    dynload = os.path.join(
        sys.base_prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "lib-dynload"
    )
    callers = set()
    if library:
        out = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", library], capture_output=True, text=True
        ).stdout
        function = ""
        for line in out.splitlines():
            if line.endswith(">:"):
                function = line.split("<", 1)[1][:-2]
            elif "call" in line and "<_Py_fopen_obj" in line:
                callers.add(function)
    for name in sorted(os.listdir(dynload)):
        out = subprocess.run(
            ["nm", "-D", "--undefined-only", os.path.join(dynload, name)],
            capture_output=True,
            text=True,
        ).stdout
        if " _Py_fopen_obj\n" in out:
            callers.add(name.split(".")[0])
    print(
        "  callers of _Py_fopen_obj (the open event with a mode string):",
        " ".join(sorted(callers)),
    )


def descriptor_control(tmp: str) -> None:
    print("3. descriptor control")
    import fcntl
    import socket

    sock = socket.socket()
    report(
        "fcntl F_SETOWN", events_of(lambda: fcntl.fcntl(sock.fileno(), fcntl.F_SETOWN, os.getpid()))
    )
    report("ioctl FIONREAD", events_of(lambda: fcntl.ioctl(sock.fileno(), 0x541B, bytes(4))))
    report("flock LOCK_SH", events_of(lambda: fcntl.flock(sock.fileno(), fcntl.LOCK_SH)))
    sock.close()


def files_without_events(tmp: str) -> None:
    print("4. C code that reads or creates files with no event")
    import _multiprocessing
    import stat

    report("os.getgrouplist", events_of(lambda: os.getgrouplist("root", 0)))
    report("os.getlogin", events_of(os.getlogin))
    report(
        "os.mknod (FIFO)", events_of(lambda: os.mknod(os.path.join(tmp, "n"), stat.S_IFIFO | 0o600))
    )
    name = "/survey-" + os.urandom(4).hex()
    report(
        "_multiprocessing.SemLock(unlink=False)",
        events_of(lambda: _multiprocessing.SemLock(1, 1, 1, name, False)),
    )
    report("_multiprocessing.sem_unlink", events_of(lambda: _multiprocessing.sem_unlink(name)))
    report("time.tzset (TZ file)", events_of(__import__("time").tzset))
    try:
        import syslog

        report("syslog.syslog", events_of(lambda: syslog.syslog(syslog.LOG_DEBUG, "survey")))
    except ImportError:
        pass
    if hasattr(sys, "activate_stack_trampoline"):

        def perf_map() -> None:
            sys.activate_stack_trampoline("perf")  # writes /tmp/perf-PID.map
            sys.deactivate_stack_trampoline()
            os.remove(f"/tmp/perf-{os.getpid()}.map")

        report("sys.activate_stack_trampoline (3.12+)", events_of(perf_map))


def name_parsing(tmp: str) -> None:
    print("5. names with a NUL: refused by CPython, or cut by C?")
    import _multiprocessing

    try:
        import _posixshmem

        name = "survey-" + os.urandom(4).hex()
        try:
            fd = _posixshmem.shm_open(name + "\x00/../x", os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
            _posixshmem.shm_unlink(name)
            print("  _posixshmem.shm_open: NUL accepted, the name cut at it")
        except ValueError:
            print("  _posixshmem.shm_open: ValueError")
    except ImportError:
        pass
    for label, call in (
        ("open()", lambda: open("a\x00b")),  # noqa: SIM115 (refused before any file)
        ("os.open", lambda: os.open(b"a\x00b", os.O_RDONLY)),
        ("sem_unlink", lambda: _multiprocessing.sem_unlink("a\x00b")),
    ):
        try:
            call()
            print(f"  {label}: accepted")
        except ValueError:
            print(f"  {label}: ValueError")
        except OSError:
            print(f"  {label}: accepted (OSError from the system)")


def main() -> None:
    print(f"CPython {sys.version.split()[0]}")
    sys.addaudithook(hook)
    with tempfile.TemporaryDirectory() as tmp:
        for survey in (
            embedded_interpreters,
            mode_string_events,
            descriptor_control,
            files_without_events,
            name_parsing,
        ):
            survey(tmp)


if __name__ == "__main__":
    main()
