"""``python-sb --explain`` and ``--explain --json`` (SPEC §2.8) through the real command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import base_env, run_sb

MAIN = """include "~/.config/py-sandboxes/user-py-sandboxes.profile"
include "./.local.py-sandboxes"
os-sandbox=${OS_SANDBOX:-subprocess}
py-sandbox=true
python-import=json
env=LANG=${LANG}
"""


@pytest.fixture
def explained(project: Path, home: Path) -> Path:
    profile = home / ".config" / "py-sandboxes"
    profile.mkdir(parents=True)
    (profile / "user-py-sandboxes.profile").write_text("net=DENY|*|10.0.0.0/8|*|OUT\n")
    (project / ".py-sandboxes").write_text(MAIN)
    (project / ".local.py-sandboxes").write_text("python-import=csv\n")
    return project


def test_explain_json(explained: Path, home: Path) -> None:
    marker = explained / "ran"
    result = run_sb(
        ["--explain", "--json", "--env=EXTRA=1", "-c", f"open({str(marker)!r}, 'w')"],
        cwd=explained,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    assert not marker.exists()  # it runs nothing
    data = json.loads(result.stdout)
    assert data["rule_file"] == str(explained / ".py-sandboxes")
    assert data["mode"] == "enforce"
    rules = {(r["key"], r["value"]): r["origin"] for r in data["rules"]}
    assert rules[("net", "DENY|*|10.0.0.0/8|*|OUT")].endswith("user-py-sandboxes.profile(1)")
    assert rules[("python-import", "csv")] == ".local.py-sandboxes(1)"
    assert rules[("os-sandbox", "subprocess")] == ".py-sandboxes(3)"  # the variable expanded
    assert rules[("env", "EXTRA=1")] == "<arg>"
    assert data["settings"]["os-sandbox"] == {"value": "subprocess", "origin": ".py-sandboxes(3)"}
    assert data["provider"]["name"] == "subprocess" and data["provider"]["available"] is True
    assert data["provider"]["kernel"] is False
    assert data["environment"] == ["EXTRA", "LANG"]
    warnings = "\n".join(data["warnings"])
    assert 'include "./.local.py-sandboxes"' in warnings
    assert "os-sandbox= uses a variable" in warnings
    assert "no learn=false" in warnings
    assert "command-line rules in effect: env=EXTRA=1" in warnings
    assert "global-py-sandboxes.profile" in warnings  # the node profile is not included
    assert 'user-py-sandboxes.profile"' not in warnings  # the user profile is


def test_explain_warns_about_interpreter_variables(explained: Path, home: Path) -> None:
    result = run_sb(
        ["--explain", "--json", "--env=PYTHONPATH=/somewhere", "-c", "pass"],
        cwd=explained,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    warnings = json.loads(result.stdout)["warnings"]
    assert any(w.startswith("env= passes PYTHONPATH: ") for w in warnings), warnings


def test_explain_text_and_variable_downgrade(explained: Path, home: Path) -> None:
    result = run_sb(
        ["--explain", "-c", "pass"], cwd=explained, env=base_env(home, {"OS_SANDBOX": "none"})
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "rule file: .py-sandboxes" in text
    assert "os-sandbox=none    [.py-sandboxes(3)]" in text
    assert "python-import=csv" in text and "[.local.py-sandboxes(1)]" in text
    assert "provider: os-sandbox=none (no kernel boundary), available here" in text
    assert "chooses the provider (now none)" in text


def test_explain_unavailable_provider_and_lock(explained: Path, home: Path) -> None:
    (explained / ".py-sandboxes").write_text(
        MAIN.replace("${OS_SANDBOX:-subprocess}", "qemu") + "learn=false\n"
    )
    result = run_sb(["--explain", "--json", "-c", "pass"], cwd=explained, env=base_env(home))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["locked_by"] == ".py-sandboxes(7)"
    provider = data["provider"]
    assert provider["name"] == "qemu"
    if not provider["available"]:
        assert provider["reason"]
        assert any("os-sandbox=qemu cannot run here" in w for w in data["warnings"])
    assert not any("no learn=false" in w for w in data["warnings"])


def test_explain_refused_configuration(explained: Path, home: Path) -> None:
    result = run_sb(["--explain", "--bogus=1", "-c", "pass"], cwd=explained, env=base_env(home))
    assert result.returncode == 2
    assert "unknown key 'bogus'" in result.stderr


def test_json_needs_explain(explained: Path, home: Path) -> None:
    result = run_sb(["--json", "-c", "pass"], cwd=explained, env=base_env(home))
    assert result.returncode == 2 and "--json goes with --explain" in result.stderr
