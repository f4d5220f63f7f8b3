"""The way back, partial mode (issue 25): nothing a worker sends can hurt its host.

Each attack is a hostile tool run by a real worker under every provider that runs one
(subprocess, landlock, bwrap, unshare), with a sync host and an async one (``host.py``); its
control reaches the objective without the protection (the same bytes decoded by plain
``pickle``, the pre-issue-25 path, the tool unsandboxed, or ``raw_output=True``). The host must
hold: the attack ends in the product's own exception, never in a crash, a hang, memory past
``max_result``, a host file's text, a foreign ``BaseException`` or a forged answer.

Classes (issue 25): 1 results decoded without bounds (``bytearray``, ``fraction_text``,
``fraction_gcd``, ``shared``, ``deque_depth``); 2 tracebacks reading host files
(``forged_frames``); 3 error records copied as trees (``record_sharing``); 4 exceptions the host
did not expect (``base``, ``tool_base``, ``cancelled``); 5 deadlines per read (``trickle``);
9 same-worker forgery and terminal output (``forge_other_call``, ``escape_output``).
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.partial.decode import MAX_FRACTION_BITS
from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, base_env, require

HOST = Path(__file__).with_name("host.py")
PROVIDERS = ["subprocess", "landlock", "bwrap", "unshare"]
HOSTS = ["sync", "async"]
SECRET_LINE = "the host's own secret, exposed by no rule"


def _run(tmp_path: Path, provider: str, attack: str, host: str, *, control: bool = False):
    rules = tmp_path / "rules.py-sandboxes"
    rules.write_text(f"learn=false\npy-sandbox=false\nos-sandbox={provider}\n")
    secret = tmp_path / "host-secret.txt"
    secret.write_text(SECRET_LINE + "\n")
    return subprocess.run(
        [PYTHON, str(HOST), str(rules), attack, host, *(["control"] if control else [])],
        cwd=tmp_path,
        env=base_env(tmp_path, {"WAYBACK_SECRET": str(secret)}),
        stdin=subprocess.PIPE,  # a stdio MCP server's protocol pipe: never read by the host
        capture_output=True,
        timeout=240,
    )


def _report(proc: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr[-3000:].decode(errors="replace")
    report: dict[str, Any] = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    return report


#: attack -> what the host must see.
HELD = {
    "bytearray": "UnsafeResultError",
    "fraction_text": "UnsafeResultError",
    "fraction_gcd": "UnsafeResultError",
    "shared": "UnsafeResultError",
    "deque_depth": "UnsafeResultError",
    "record_sharing": "UnsafeResultError",
    "forged_frames": "ValueError",
    "base": "SandboxedError",
    "tool_base": "SandboxedError",
    "cancelled": "SandboxedError",
    "trickle": "CallTimeoutError",
}


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("attack", [*HELD, "forge_other_call", "escape_output"])
def test_the_host_holds(tmp_path: Path, provider: str, attack: str, host: str) -> None:
    state = get_provider(provider).availability()
    require(state.ok, f"os-sandbox={provider}: {state.reason} ({state.install_hint})")
    proc = _run(tmp_path, provider, attack, host)
    report = _report(proc)
    if attack == "forge_other_call":
        # Call A never gets call B's forgery: the worker that forged is ended, A fails.
        assert report["outcome"] in ("WorkerDiedError", "CallCancelledError", "returned"), report
        assert report.get("value") != repr("forged"), report
        return
    if attack == "escape_output":
        assert report["outcome"] == "returned", report
        assert b"tool output" in proc.stderr
        assert b"\x1b" not in proc.stderr and b"\x07" not in proc.stderr
        assert b"\\x1b]52;c;" in proc.stderr  # shown, harmless
        return
    assert report["outcome"] == HELD[attack], report
    if attack in ("base", "tool_base", "cancelled", "forged_frames"):
        expected = {
            "base": "builtins.BaseException",
            "tool_base": "__main__.ToolInterrupt",
            "cancelled": "asyncio.exceptions.CancelledError",
            "forged_frames": "builtins.ValueError",
        }[attack]
        if attack != "forged_frames":
            assert report["remote_type"] == expected, report
    if attack == "forged_frames":
        assert SECRET_LINE not in report["notes"], report
        assert "/dev/zero" in report["notes"]  # the frames are shown, their files not read
    if host == "async":
        assert report["cancelled"] is False, report


@pytest.mark.parametrize(
    "attack",
    [
        "bytearray",
        "fraction_text",
        "fraction_gcd",
        "shared",
        "deque_depth",
        "record_sharing",
        "forged_frames",
        "base",
        "tool_base",
        "cancelled",
        "trickle",
        "forge_other_call",
    ],
)
def test_control_the_objective_is_reached_without_the_protection(
    tmp_path: Path, attack: str
) -> None:
    proc = _run(tmp_path, "subprocess", attack, "sync", control=True)
    if attack == "deque_depth":
        assert proc.returncode == -signal.SIGSEGV, proc.stderr[-2000:]  # the host crashed
        return
    report = _report(proc)
    if attack in ("bytearray", "shared"):
        assert report["expanded"] > report["limit"] * 4
    elif attack in ("fraction_text", "fraction_gcd"):
        assert report["bits"] > MAX_FRACTION_BITS
    elif attack == "record_sharing":
        assert report["copied"] > 10**6 > 1000 * report["encoded"]
    elif attack == "forged_frames":
        assert report["line"].strip() == SECRET_LINE
    elif attack in ("base", "tool_base", "cancelled"):
        assert report["outcome"].startswith("escaped:"), report
    elif attack == "trickle":
        assert report["frame"] and report["waited_past_timeout"]
    elif attack == "forge_other_call":
        assert report["a_got"] == "forged"


def test_control_raw_output_reaches_the_terminal(tmp_path: Path) -> None:
    """``raw_output=True`` (the filter off): the escape sequence reaches the host's stderr."""

    proc = _run(tmp_path, "subprocess", "escape_output", "sync", control=True)
    assert _report(proc)["outcome"] == "returned"
    assert b"\x1b]52;c;cm0gLXJmIH4K\x07" in proc.stderr
