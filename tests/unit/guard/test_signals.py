"""Python signal handlers under the guard (``guard/signals.py``): they never run inside the audit
hook and never receive one of the guard's frames, and ``signal.signal``/``getsignal`` still
speak of the program's own handlers."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

RULES = "python-import=*\nexpose-ro=.\npython-api=ALLOW:signal.setitimer\n"

#: A timer fires SIGALRM every 500 µs while the program keeps the hook busy (sys.audit of an
#: open event of an exposed file: nearly all the time goes to the hook's Python code). Each
#: handler call records the globals' module name of every frame in its argument's chain.
STORM = """
import signal, sys
seen = []
calls = [0]
def handler(signum, frame):
    calls[0] += 1
    while frame is not None:
        seen.append(frame.f_globals.get("__name__"))
        frame = frame.f_back
signal.signal(signal.SIGALRM, handler)
signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
for _ in range(20000):
    sys.audit("open", "prog.py", "r", 0)
    if calls[0] >= 100:
        break
signal.setitimer(signal.ITIMER_REAL, 0, 0)
signal.signal(signal.SIGALRM, signal.SIG_IGN)
guard = sorted({name for name in seen if str(name).startswith("pysandboxes.guard")})
print("calls", calls[0] > 0, "guard frames", guard)
"""


def test_handler_never_gets_a_guard_frame(tmp_path: Path) -> None:
    result = run_armed(STORM, RULES, tmp_path)
    assert result.lines == ["calls True guard frames []"], result.stdout + result.stderr


def test_signal_and_getsignal_speak_of_the_programs_handlers(tmp_path: Path) -> None:
    code = """
import signal
def mine(signum, frame):
    pass
print(signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL)
print(signal.signal(signal.SIGUSR1, mine) is signal.SIG_DFL)
print(signal.getsignal(signal.SIGUSR1) is mine)
print(signal.signal(signal.SIGUSR1, signal.SIG_IGN) is mine)
print(signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN)
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
got = []
signal.signal(signal.SIGUSR2, lambda signum, frame: got.append((signum, frame.f_code.co_name)))
def work():
    signal.raise_signal(signal.SIGUSR2)
work()
print(got == [(signal.SIGUSR2, "work")] or got)
"""
    rules = RULES + "python-api=ALLOW:introspection\n"
    result = run_armed(code, rules, tmp_path)
    assert result.lines == ["True"] * 7, result.stdout + result.stderr


def test_keyboard_interrupt_still_interrupts(tmp_path: Path) -> None:
    code = """
import signal
try:
    signal.raise_signal(signal.SIGINT)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
"""
    result = run_armed(code, RULES, tmp_path)
    assert result.lines == ["interrupted"], result.stdout + result.stderr


def test_handler_after_open_and_chdir_refuses_nothing(tmp_path: Path) -> None:
    """The trampoline judges the last open()'s path again after a handler (an EINTR retry
    may follow, issue 18 class 6); once the program moved on -- here a chdir after the open --
    that state is forgotten: a handler that runs later refuses nothing."""

    (tmp_path / "data.txt").write_text("data\n")
    code = """
import os, signal
open("data.txt").read()
os.chdir("/")
hit = []
signal.signal(signal.SIGALRM, lambda signum, frame: hit.append(signum))
signal.setitimer(signal.ITIMER_REAL, 0.05)
while not hit:
    pass
print("ran", hit == [signal.SIGALRM])
"""
    result = run_armed(code, RULES, tmp_path)
    assert result.lines == ["ran True"], result.stdout + result.stderr
