"""The guard's judgment of a TCP bind to port 0 on loopback, deferred to ``listen``
(``guard/network.py``, ``defer_bind``): what is deferred, what is not, and that nothing escapes
judgment (the bookkeeping full, a socket's id reused)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

TRY = """
import socket
def attempt(name, call):
    try:
        call()
        print(name, "ran")
    except OSError as exc:
        print(name, type(exc).__name__)
"""

RULES = "python-import=socket\n"


def test_what_is_deferred_and_what_is_not(tmp_path: Path) -> None:
    code = (
        TRY
        + """
s = socket.socket(socket.AF_INET6)
attempt("probe_v6", lambda: s.bind(("::1", 0)))
attempt("probe_v6_listen", lambda: s.listen())
s.close()
s = socket.socket()
attempt("probe_127_2", lambda: s.bind(("127.0.0.2", 0)))
s.close()
s = socket.socket()
attempt("fixed_port", lambda: s.bind(("127.0.0.1", 1)))
s.close()
s = socket.socket()
attempt("wildcard", lambda: s.bind(("0.0.0.0", 0)))
s.close()
s = socket.socket()
attempt("by_name", lambda: s.bind(("localhost", 0)))
s.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt("udp", lambda: u.bind(("127.0.0.1", 0)))
u.close()
"""
    )
    result = run_armed(code, RULES, tmp_path)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out == {
        "probe_v6": "ran",
        "probe_v6_listen": "RuleConnectionRefusedError",
        "probe_127_2": "ran",
        "fixed_port": "RuleConnectionRefusedError",
        "wildcard": "RuleConnectionRefusedError",
        "by_name": "RuleConnectionRefusedError",
        "udp": "RuleConnectionRefusedError",
    }, result.stdout + result.stderr


def test_an_in_rule_lets_it_listen(tmp_path: Path) -> None:
    code = TRY + (
        "s = socket.socket()\n"
        "attempt('bind', lambda: s.bind(('127.0.0.1', 0)))\n"
        "attempt('listen', lambda: s.listen())\n"
    )
    result = run_armed(code, RULES + "net=ALLOW|TCP|127.0.0.1|0|IN\n", tmp_path)
    assert result.lines == ["bind ran", "listen ran"], result.stderr


def test_nothing_escapes_when_the_bookkeeping_is_full(tmp_path: Path) -> None:
    """300 probes held open: the ones past the table's size are judged at bind (refused), and
    every one of them that listens is refused."""

    code = TRY + (
        "held = [socket.socket() for _ in range(300)]\n"
        "bound = 0\n"
        "for s in held:\n"
        "    try:\n"
        "        s.bind(('127.0.0.1', 0))\n"
        "        bound += 1\n"
        "    except OSError:\n"
        "        pass\n"
        "listened = 0\n"
        "for s in held:\n"
        "    try:\n"
        "        s.listen()\n"
        "        listened += 1\n"
        "    except OSError:\n"
        "        pass\n"
        "print('bound', bound, 'listened', listened)\n"
    )
    result = run_armed(code, RULES, tmp_path)
    assert result.lines == ["bound 256 listened 0"], result.stdout + result.stderr
