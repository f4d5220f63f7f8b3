"""Run a snippet in a fresh interpreter with the guard armed, without the launcher.

The guard must never be armed inside the pytest process (an audit hook cannot be removed):
every test that needs it goes through :func:`run_armed`, which starts ``python -c`` with a
small bootstrap: parse the rules, build the :class:`RunContext`, compile the snippet (before
arming, as the launcher does), arm, run it. The snippet reports through ``print``; a refusal
that escapes it is printed as ``REFUSED <type> <denials as JSON>``.

In ``learn``/``audit`` mode the bootstrap passes the write end of a pipe as
``RunContext.record_fd``; :class:`Armed` returns the JSON records read from it -- the cheap
way to check what learning would see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BOOT = r"""
import json, os, sys
from pysandboxes.policy import parse_text
from pysandboxes.runtime import RunContext
from pysandboxes.guard import arm
from pysandboxes.launch.child import eval_extension
import pysandboxes
spec = json.loads(sys.argv[1])
policy = parse_text(spec["rules"], spec["rule_file"])
context = RunContext.from_dict(spec["context"])
code = compile(spec["code"], spec["filename"], "exec")
arm(policy, context, eval_extension(policy, context.mode))  # as launch/child.py arms it
try:
    exec(code, {"__name__": "__main__"})
except Exception as exc:
    found = [d.to_dict() for d in pysandboxes.sandbox_denials(exc)]
    print("REFUSED", type(exc).__name__, json.dumps(found))
"""


@dataclass
class Armed:
    returncode: int
    stdout: str
    stderr: str
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    def refused(self) -> tuple[str, list[dict[str, Any]]] | None:
        for line in self.lines:
            if line.startswith("REFUSED "):
                _, name, rest = line.split(" ", 2)
                return name, json.loads(rest)
        return None


def run_armed(
    code: str,
    rules: str,
    cwd: Path,
    *,
    mode: str = "enforce",
    tmpdir: Path | None = None,
    denials_file: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30,
    context_overrides: dict[str, Any] | None = None,
) -> Armed:
    read_fd = write_fd = -1
    if mode != "enforce":
        read_fd, write_fd = os.pipe()
    context = {
        "mode": mode,
        "cwd": str(cwd),
        "tmpdir": str(tmpdir) if tmpdir else None,
        "program_kind": "script",
        "program": str(cwd / "prog.py"),
        "python": sys.executable,
        "prefixes": [],
        "record_fd": write_fd,
        "denials_file": str(denials_file) if denials_file else None,
        **(context_overrides or {}),
    }
    spec = {
        "rules": rules,
        "rule_file": str(cwd / ".py-sandboxes"),
        "context": context,
        "code": code,
        "filename": str(cwd / "prog.py"),
    }
    chunks: list[bytes] = []
    reader = None
    if read_fd >= 0:

        def drain() -> None:
            while True:
                data = os.read(read_fd, 65536)
                if not data:
                    return
                chunks.append(data)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", BOOT, json.dumps(spec)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            pass_fds=(write_fd,) if write_fd >= 0 else (),
            check=False,
        )
    finally:
        if write_fd >= 0:
            os.close(write_fd)
    records: list[dict[str, Any]] = []
    if reader is not None:
        reader.join(timeout)
        os.close(read_fd)
        for line in b"".join(chunks).decode().splitlines():
            records.append(json.loads(line))
    return Armed(proc.returncode, proc.stdout, proc.stderr, records)
