"""Learn and audit modes: nothing refused, one JSON line per access on ``record_fd``."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.unit.guard.harness import run_armed

PROGRAM = """
import os, json, socket
print("secret", open(SECRET).read().strip())
print("env", os.environ.get("SOME_VAR"), "HOME" in os.environ)
print("eval", eval("6*7"))
print("system", os.system("true"))
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1)
except OSError:
    pass
print("done")
"""


def _program(tmp_path: Path) -> tuple[Path, str]:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("s\n")
    project = tmp_path / "project"
    project.mkdir()
    return project, PROGRAM.replace("SECRET", repr(str(secret)))


def test_learn_records_every_access_and_refuses_nothing(tmp_path: Path) -> None:
    project, code = _program(tmp_path)
    env = {**os.environ, "SOME_VAR": "v"}
    result = run_armed(code, "", project, mode="learn", env=env)
    assert result.returncode == 0, result.stderr
    assert "secret s" in result.lines and "eval 42" in result.lines and "done" in result.lines
    kinds = {
        (r["kind"], r.get("name") or r.get("function") or r.get("path") or r.get("ip"))
        for r in result.records
    }
    secret = str(tmp_path / "outside" / "secret.txt")
    assert ("file", secret) in kinds
    assert ("import", "socket") in kinds and ("import", "json") in kinds
    assert ("env", "SOME_VAR") in kinds and ("env", "HOME") in kinds
    assert ("api", "builtins.compile") in kinds and ("api", "os.system") in kinds
    net = [r for r in result.records if r["kind"] == "net"]
    assert net and net[0]["ip"] == "127.0.0.1" and net[0]["port"] == 9 and net[0]["dir"] == "OUT"
    assert not any("denial" in r for r in result.records)
    assert len(result.records) == len({json.dumps(r, sort_keys=True) for r in result.records})


def test_audit_adds_the_denials(tmp_path: Path) -> None:
    project, code = _program(tmp_path)
    denials = tmp_path / "denials.jsonl"
    rules = "python-import=os,json,socket\nnet=ALLOW|TCP|127.0.0.1|*|OUT\n"
    result = run_armed(code, rules, project, mode="audit", denials_file=denials)
    assert result.returncode == 0 and "done" in result.lines, result.stderr
    refused = {r["denial"]["target"] for r in result.records if "denial" in r}
    assert str(tmp_path / "outside" / "secret.txt") in refused
    assert {"builtins.compile", "os.system"} <= refused
    assert not any(r["kind"] == "net" and "denial" in r for r in result.records)
    logged = [json.loads(line) for line in denials.read_text().splitlines()]
    assert {d["target"] for d in logged} == refused


SCANS = """
import os, urllib.request
urllib.request.getproxies()
dict(os.environ); os.environ.copy(); list(os.environ.items()); repr(os.environ)
{**os.environ}; os.environ == {}; list(os.environ.values())
for name in os.environ:
    os.environ[name]
print("by name", os.environ.get("WANTED"), os.getenv("ALSO"), "THIRD" in os.environ)
print("done")
"""


def test_a_scan_of_the_environment_is_one_record_not_a_read_of_each_variable(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "WANTED": "w", "ALSO": "a", "AWS_SECRET_ACCESS_KEY": "s", "OTHER": "o"}
    result = run_armed(SCANS, "", tmp_path, mode="learn", env=env)
    assert result.returncode == 0 and "done" in result.lines, result.stderr
    read = {r["name"] for r in result.records if r["kind"] == "env"}
    assert {"WANTED", "ALSO", "THIRD"} <= read
    # urllib's by-name probe (REQUEST_METHOD) is a read by name; nothing the scans saw is.
    assert read <= {"WANTED", "ALSO", "THIRD", "REQUEST_METHOD"}, read
    assert [r for r in result.records if r["kind"] == "env-scan"] == [{"kind": "env-scan"}]


PROBES = """
try:
    import winreg
except ImportError:
    pass
try:
    import no_such_module_here
except ImportError:
    pass
import importlib
importlib.import_module("json")
import gc
print("done")
"""


def test_an_import_is_reported_once_its_module_is_loaded_and_a_probe_never(
    tmp_path: Path,
) -> None:
    denials = tmp_path / "denials.jsonl"
    for mode in ("learn", "audit"):
        result = run_armed(PROBES, "", tmp_path, mode=mode, denials_file=denials)
        assert result.returncode == 0 and "done" in result.lines, result.stderr
        imported = {r["name"] for r in result.records if r["kind"] == "import"}
        # gc, a built-in module imported last, is reported at exit at the latest.
        assert imported == {"importlib", "json", "gc"}, (mode, imported)
    logged = {json.loads(line)["target"] for line in denials.read_text().splitlines()}
    assert logged == {"importlib", "json", "gc"}


def test_environb_reads_by_name_and_scans(tmp_path: Path) -> None:
    code = (
        "import os\n"
        "print(os.environb.get(b'WANTED'), len(dict(os.environb)) > 0)\n"
        "for key in os.environb:\n"
        "    os.environb[key]\n"
        "print('done')\n"
    )
    env = {**os.environ, "WANTED": "w", "AWS_SECRET_ACCESS_KEY": "s"}
    result = run_armed(code, "", tmp_path, mode="learn", env=env)
    assert result.returncode == 0 and "done" in result.lines, result.stderr
    assert {r["name"] for r in result.records if r["kind"] == "env"} == {"WANTED"}
    assert {"kind": "env-scan"} in result.records
