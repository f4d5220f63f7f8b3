"""``python-sb --install-hook=AGENT [--user]`` / ``--uninstall-hook``, in a temporary project and
HOME, through the real command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import REPO, base_env, run_sb

AGENTS = ["claude-code", "codex", "gemini", "cursor", "copilot"]
PROJECT_FILES = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "copilot": ".github/hooks/python-sb.json",
}
USER_FILES = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "copilot": ".copilot/hooks/python-sb.json",
}


def commands_in(data: object) -> list[str]:
    """Every hook command string in a registration file."""

    found: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("command", "bash") and isinstance(value, str):
                found.append(value)
            else:
                found.extend(commands_in(value))
    elif isinstance(data, list):
        for item in data:
            found.extend(commands_in(item))
    return found


@pytest.mark.parametrize("agent", AGENTS)
def test_install_is_idempotent_and_uninstall_removes_it(
    agent: str, project: Path, home: Path
) -> None:
    env = base_env(home)
    result = run_sb([f"--install-hook={agent}"], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    path = project / PROJECT_FILES[agent]
    first = path.read_bytes()
    [command] = set(commands_in(json.loads(first)))  # one command, under each event it hooks
    assert command.endswith(f"python-sb --hook={agent}")
    assert Path(command.split()[0]).is_absolute()
    again = run_sb([f"--install-hook={agent}"], cwd=project, env=env)
    assert again.returncode == 0
    assert "already in" in again.stdout
    assert path.read_bytes() == first
    result = run_sb([f"--uninstall-hook={agent}"], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert not path.exists()
    assert not (home / USER_FILES[agent]).exists()


@pytest.mark.parametrize("agent", AGENTS)
def test_user_install_goes_to_home(agent: str, project: Path, home: Path) -> None:
    env = base_env(home)
    result = run_sb([f"--install-hook={agent}", "--user"], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert (home / USER_FILES[agent]).exists()
    assert list(project.iterdir()) == []
    result = run_sb([f"--uninstall-hook={agent}", "--user"], cwd=project, env=env)
    assert result.returncode == 0
    assert not (home / USER_FILES[agent]).exists()


def test_other_settings_are_kept(project: Path, home: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = {
        "permissions": {"allow": ["Bash(git status)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
            "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}],
        },
    }
    settings.write_text(json.dumps(original))
    env = base_env(home)
    result = run_sb(
        [
            "--install-hook=claude-code",
            "--hook-command=python-sb",
            "--allow-config=ci.py-sandboxes",
        ],
        cwd=project,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(settings.read_text())
    assert data["permissions"] == original["permissions"]
    assert data["hooks"]["PostToolUse"] == original["hooks"]["PostToolUse"]
    assert commands_in(data["hooks"]["PreToolUse"]) == [
        "lint",
        "python-sb --hook=claude-code --allow-config=ci.py-sandboxes",
    ]
    skill = project / ".claude" / "skills" / "python-sb" / "SKILL.md"
    assert skill.read_text() == (REPO / "coding-agents" / "python-sb" / "SKILL.md").read_text()
    # re-installing with other options replaces the entry rather than adding a second one
    run_sb(["--install-hook=claude-code", "--hook-command=python-sb"], cwd=project, env=env)
    data = json.loads(settings.read_text())
    assert commands_in(data["hooks"]["PreToolUse"]) == ["lint", "python-sb --hook=claude-code"]
    result = run_sb(["--uninstall-hook=claude-code"], cwd=project, env=env)
    assert result.returncode == 0
    assert json.loads(settings.read_text()) == original
    assert not skill.exists()


def test_a_hook_command_with_words(project: Path, home: Path) -> None:
    env = base_env(home)
    result = run_sb(
        ["--install-hook=codex", "--hook-command=uvx --from pysandboxes python-sb"],
        cwd=project,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads((project / ".codex" / "hooks.json").read_text())
    assert commands_in(data) == ["uvx --from pysandboxes python-sb --hook=codex"]


def test_a_file_that_is_not_json_is_left_alone(project: Path, home: Path) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    result = run_sb(["--install-hook=gemini"], cwd=project, env=base_env(home))
    assert result.returncode == 2
    assert "is not valid JSON" in result.stderr
    assert "nothing was changed" in result.stderr
    assert settings.read_text() == "{ not json"


def test_bad_arguments(project: Path, home: Path) -> None:
    env = base_env(home)
    result = run_sb(["--install-hook=emacs"], cwd=project, env=env)
    assert result.returncode == 2
    assert "unknown agent 'emacs'" in result.stderr
    result = run_sb(["--install-hook=cursor", "--frobnicate=1"], cwd=project, env=env)
    assert result.returncode == 2
    assert "unknown hook option" in result.stderr
    result = run_sb(["--uninstall-hook=cursor", "--allow-config=x"], cwd=project, env=env)
    assert result.returncode == 2
    assert list(project.iterdir()) == []


def test_the_installed_hook_refuses_a_bare_python(project: Path, home: Path) -> None:
    """The command written into the registration is the one that runs: run it."""

    env = base_env(home)
    run_sb(["--install-hook=cursor"], cwd=project, env=env)
    data = json.loads((project / ".cursor" / "hooks.json").read_text())
    [command] = set(commands_in(data))
    import subprocess

    payload = {"hook_event_name": "beforeShellExecution", "command": "python3 x.py", "cwd": "."}
    result = subprocess.run(
        command, shell=True, input=json.dumps(payload), capture_output=True, text=True, env=env
    )
    assert json.loads(result.stdout)["permission"] == "deny"


@pytest.mark.parametrize("agent", AGENTS)
def test_coding_agents_directory_matches_the_installer(
    agent: str, project: Path, home: Path
) -> None:
    """``coding-agents/<agent>/`` holds exactly what ``--install-hook --hook-command=python-sb``
    writes, for people who copy the files by hand."""

    run_sb([f"--install-hook={agent}", "--hook-command=python-sb"], cwd=project, env=base_env(home))
    shipped = REPO / "coding-agents" / agent / PROJECT_FILES[agent]
    assert shipped.read_text() == (project / PROJECT_FILES[agent]).read_text()


def test_the_packaged_skill_is_the_shipped_one() -> None:
    packaged = REPO / "src" / "pysandboxes" / "integrations" / "SKILL.md"
    assert packaged.read_text() == (REPO / "coding-agents" / "python-sb" / "SKILL.md").read_text()


@pytest.mark.parametrize(
    ("agent", "closed"),
    [("claude-code", True), ("cursor", True), ("codex", False), ("gemini", False),
     ("copilot", False)],
)  # fmt: skip
def test_fail_closed_where_the_agent_allows_it(
    agent: str, closed: bool, project: Path, home: Path
) -> None:
    result = run_sb([f"--install-hook={agent}"], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    data = json.loads((project / PROJECT_FILES[agent]).read_text())
    if agent == "claude-code":
        for event in ("PreToolUse", "PreSkillShellCommand"):
            [group] = data["hooks"][event]
            assert [h["onFailure"] for h in group["hooks"]] == ["block"]
        for tool in ("Bash", "Monitor", "PowerShell", "Write", "Edit", "NotebookEdit"):
            assert tool in data["hooks"]["PreToolUse"][0]["matcher"].split("|")
    if agent == "cursor":
        assert [e["failClosed"] for e in data["hooks"]["beforeShellExecution"]] == [True]
        assert [e["failClosed"] for e in data["hooks"]["preToolUse"]] == [True]
    # the installer says whether the agent fails closed, and what is left to do
    assert ("fails closed: yes" in result.stdout) == closed
    assert ("fails closed: NO" in result.stdout) == (not closed)
    assert "to do:" in result.stdout


def test_trust_notes(project: Path, home: Path) -> None:
    codex = run_sb(["--install-hook=codex"], cwd=project, env=base_env(home)).stdout
    assert "/hooks" in codex and f'[projects."{project}"]' in codex
    gemini = run_sb(["--install-hook=gemini"], cwd=project, env=base_env(home)).stdout
    assert "gemini trust" in gemini and "the user's too" in gemini


def test_claude_code_user_install_follows_claude_config_dir(project: Path, home: Path) -> None:
    config = home / "elsewhere"
    env = {**base_env(home), "CLAUDE_CONFIG_DIR": str(config)}
    result = run_sb(["--install-hook=claude-code", "--user"], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert (config / "settings.json").exists()
    assert (config / "skills" / "python-sb" / "SKILL.md").exists()
    assert not (home / ".claude").exists()
    assert str(config / "settings.json") in result.stdout
    run_sb(["--uninstall-hook=claude-code", "--user"], cwd=project, env=env)
    assert not (config / "settings.json").exists()
    assert not (config / "skills" / "python-sb").exists()


def test_copilot_installs_at_the_git_root(project: Path, home: Path) -> None:
    """Copilot CLI reads ``.github/hooks`` at the root of the repository only: from a
    sub-directory, the file is written at the root, and the installer says where."""

    (project / ".git").mkdir()
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    result = run_sb(["--install-hook=copilot"], cwd=sub, env=base_env(home))
    assert result.returncode == 0, result.stderr
    written = project / ".github" / "hooks" / "python-sb.json"
    assert written.exists()
    assert not (sub / ".github").exists()
    assert str(written) in result.stdout
    run_sb(["--uninstall-hook=copilot"], cwd=sub, env=base_env(home))
    assert not written.exists()
