"""The agents' own loaders accept the files ``--install-hook`` writes.

Each agent that ships an offline check is run on a project (and a user configuration) where the
real ``python-sb --install-hook=AGENT`` wrote its file: Claude Code's ``claude doctor`` (its
"Invalid settings" section), Codex's hook listing (``hooks/list`` of ``codex app-server``, the
request behind its ``/hooks`` view) and Gemini CLI's settings loader (``loadSettings`` of its
bundle). Each test also checks, as a control, that the loader does report a broken entry, so a
loader that ignores the file cannot pass for one that accepts it.

The agents come from the npm registry, pinned in scripts/setup.sh (``.venv/agents-npm``):
Claude Code 2.1.332, Codex CLI 0.171.0, Gemini CLI 0.61.0. Without them the tests skip, and
fail under PYSANDBOXES_REQUIRE_ALL=1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO, base_env, require, run_sb

NPM = REPO / ".venv" / "agents-npm" / "node_modules"


def agent_program(relative: str) -> Path:
    path = NPM / relative
    require(path.exists(), f"{relative} not installed (scripts/setup.sh: .venv/agents-npm)")
    return path


# -- Claude Code -----------------------------------------------------------------------------------


def claude_doctor(project: Path, env: dict[str, str]) -> str:
    claude = agent_program(".bin/claude")
    result = subprocess.run(
        [str(claude), "doctor"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def invalid_settings(report: str) -> str:
    """The "Invalid settings" section of ``claude doctor``'s report ("" when there is none)."""

    lines = report.splitlines()
    if "Invalid settings" not in lines:
        return ""
    start = lines.index("Invalid settings")
    section = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        section.append(line)
    return "\n".join(section)


def test_claude_code_doctor_accepts_the_project_and_user_files(project: Path, home: Path) -> None:
    config = home / "claude-config"
    env = {**base_env(home), "CLAUDE_CONFIG_DIR": str(config)}
    assert run_sb(["--install-hook=claude-code"], cwd=project, env=env).returncode == 0
    assert run_sb(["--install-hook=claude-code", "--user"], cwd=project, env=env).returncode == 0
    assert (config / "settings.json").exists()
    report = claude_doctor(project, env)
    assert "Claude Code doctor" in report
    assert invalid_settings(report) == "", report
    # control: the same file with an entry Claude Code cannot load is reported
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"] = "sometimes"
    settings.write_text(json.dumps(data))
    broken = invalid_settings(claude_doctor(project, env))
    assert str(settings) in broken and "onFailure" in broken


# -- Codex -----------------------------------------------------------------------------------------


def codex_hooks(project: Path, codex_home: Path, home: Path) -> dict[str, object]:
    codex = agent_program(".bin/codex")
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "python-sb-tests", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(project)]}},
    ]  # fmt: skip
    process = subprocess.Popen(
        [str(codex), "app-server"],
        cwd=project,
        env={**base_env(home), "CODEX_HOME": str(codex_home)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        for line in process.stdout:  # the answers, among notifications
            message = json.loads(line)
            if message.get("id") == 2:
                assert "result" in message, message
                [listing] = message["result"]["data"]
                return dict(listing)
        raise AssertionError("codex app-server closed without answering hooks/list")
    finally:
        process.kill()
        process.wait(timeout=60)


def test_codex_lists_the_installed_hook(project: Path, home: Path) -> None:
    codex_home = home / "codex-home"
    codex_home.mkdir()
    # the user's step the installer prints: trust the project
    (codex_home / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    assert run_sb(["--install-hook=codex"], cwd=project, env=base_env(home)).returncode == 0
    listing = codex_hooks(project, codex_home, home)
    assert listing["errors"] == [] and listing["warnings"] == [], listing
    [hook] = listing["hooks"]  # type: ignore[misc]
    assert hook["eventName"] == "preToolUse"
    assert hook["command"].endswith("python-sb --hook=codex")
    assert set(hook["matcher"].split("|")) >= {"Bash", "apply_patch"}
    assert hook["enabled"] is True
    # not trusted yet: the installer tells the user to trust it in /hooks
    assert hook["trustStatus"] == "untrusted"
    # control: a file Codex cannot read is reported, not ignored
    (project / ".codex" / "hooks.json").write_text('{"hooks": {"PreToolUse": [{"hooks": 3}]}}')
    broken = codex_hooks(project, codex_home, home)
    assert broken["hooks"] == [] and (broken["errors"] or broken["warnings"]), broken


# -- Gemini CLI ------------------------------------------------------------------------------------

LOAD = """
const [bundle, dir] = process.argv.slice(1);
const fs = await import("node:fs");
for (const name of fs.readdirSync(bundle)) {
  if (!name.startsWith("chunk-") || !name.endsWith(".js")) continue;
  const text = fs.readFileSync(`${bundle}/${name}`, "utf8");
  if (!text.includes("function loadSettings(")) continue;
  const module = await import(`${bundle}/${name}`);
  if (typeof module.loadSettings !== "function") continue;
  const settings = module.loadSettings(dir);
  console.log(JSON.stringify({errors: settings.errors.map((e) => e.message),
                              trusted: settings.isTrusted,
                              hooks: settings.merged.hooks?.BeforeTool ?? []}));
  process.exit(0);
}
console.error("no loadSettings in the bundle");
process.exit(3);
"""


def gemini_settings(project: Path, home: Path) -> dict[str, object]:
    bundle = agent_program("@google/gemini-cli/bundle")
    result = subprocess.run(
        ["node", "--input-type=module", "-e", LOAD, str(bundle), str(project)],
        env=base_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.splitlines()[-1]))


def test_gemini_loads_the_installed_settings(project: Path, home: Path) -> None:
    assert run_sb(["--install-hook=gemini"], cwd=project, env=base_env(home)).returncode == 0
    untrusted = gemini_settings(project, home)
    assert untrusted["trusted"] is False and untrusted["hooks"] == []  # what the note says
    # the user's step the installer prints: trust the folder
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(project): "TRUST_FOLDER"})
    )
    loaded = gemini_settings(project, home)
    assert loaded["errors"] == [], loaded
    [group] = loaded["hooks"]  # type: ignore[misc]
    assert group["matcher"].split("|")[0] == "run_shell_command"
    assert group["hooks"][0]["command"].endswith("python-sb --hook=gemini")
    # control: an entry the loader's schema refuses is reported
    settings = project / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] = "soon"
    settings.write_text(json.dumps(data))
    assert gemini_settings(project, home)["errors"], "the loader ignored a broken entry"


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_the_shipped_files_are_what_the_loaders_accept(agent: str) -> None:
    """coding-agents/ ships what --install-hook writes (test_hook_install.py); that is the file
    the tests above load, with ``python-sb`` as the command."""

    shipped = {
        "claude-code": "coding-agents/claude-code/.claude/settings.json",
        "codex": "coding-agents/codex/.codex/hooks.json",
        "gemini": "coding-agents/gemini/.gemini/settings.json",
    }[agent]
    assert f"python-sb --hook={agent}" in (REPO / shipped).read_text()
