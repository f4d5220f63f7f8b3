"""Each agent's payload, built as that agent's current source builds it, for every tool that can
run a command or write a file, through the real ``python-sb --hook=AGENT``.

Sources (re-check them when an agent is upgraded):

- Claude Code 2.1.332 (npm ``@anthropic-ai/claude-code-linux-x64@2.1.332``, the JavaScript
  bundled in its ``claude`` binary): ``executePreToolHooks`` sends ``{...Sh(session),
  hook_event_name: "PreToolUse", tool_name, tool_input, tool_use_id}`` where ``Sh`` gives
  ``session_id, transcript_path, cwd, permission_mode, agent_id, agent_type, effort``; the
  skills' shell commands go through ``PreSkillShellCommand`` (``tool_name`` Bash or PowerShell,
  ``tool_input.command``, ``command_name``, ``command_source``, ``invoked_by``). The tool inputs
  are ``sdk-tools.d.ts`` of ``@anthropic-ai/claude-code@2.1.332``: ``BashInput``,
  ``MonitorInput`` (``command`` or ``ws``), ``FileWriteInput``, ``FileEditInput``,
  ``NotebookEditInput``; the PowerShell tool's ``ruleContentField`` is ``command``. A Monitor
  call met by a matcher through its Bash family arrives renamed ``Bash`` (``yws``/``xqn``).
- Codex CLI 0.171.0: the input schema ``pre-tool-use.command.input`` embedded in the binary
  (``codex-rs/hooks/schema/generated/``: ``session_id, turn_id, transcript_path, cwd,
  hook_event_name, model, permission_mode, tool_name, tool_input, tool_use_id``); shell tools
  reach hooks as ``tool_name: "Bash"`` with ``tool_input: {command}`` and no workdir
  (``codex-rs/hooks/src/events/pre_tool_use.rs``); ``apply_patch`` carries the patch in
  ``tool_input.command``; a patch typed as a shell command (``apply_patch <<'EOF'``) is a Bash
  command.
- Gemini CLI 0.61.0 (npm ``@google/gemini-cli``, ``bundle/``, ``hookEventHandler.ts``):
  ``fireBeforeToolEvent`` sends ``createBaseInput("BeforeTool")`` (``session_id,
  transcript_path, cwd, hook_event_name, timestamp``) with ``tool_name`` and ``tool_input``
  (the invocation's params: ``run_shell_command`` ``{command, description, dir_path,
  is_background}``, ``write_file`` ``{file_path, content}``, ``replace`` ``{file_path,
  old_string, new_string}``).
- Cursor (its documentation, https://cursor.com/docs/agent/hooks): ``beforeShellExecution``
  ``{conversation_id, generation_id, model, hook_event_name, cursor_version, workspace_roots,
  user_email, command, cwd}``; ``preToolUse`` with ``tool_name`` (``Shell``, ``Write``,
  ``StrReplace``, ``Delete``...) and ``tool_input``.
- Copilot CLI 1.0.102 (its hooks reference,
  https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference):
  ``preToolUse`` ``{timestamp, cwd, toolName, toolArgs}`` with ``toolArgs`` a JSON string;
  shell tools ``bash`` (``command``) and ``powershell``, file tools ``edit``/``create``
  (``path``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_sb

BAD = "timeout 5 python3 scripts/report.py"
GOOD = "python-sb scripts/report.py"


def claude(cwd: Path, tool: str, tool_input: dict[str, object], event: str = "PreToolUse"):
    body: dict[str, object] = {
        "session_id": "0b1c5c1e-0000-4000-8000-000000000001",
        "transcript_path": str(cwd / ".transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "agent_type": "main",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }
    if event == "PreSkillShellCommand":
        body.update({"command_name": "report", "command_source": "projectSettings",
                     "invoked_by": "user"})  # fmt: skip
    return body


def codex(cwd: Path, tool: str, tool_input: dict[str, object]) -> dict[str, object]:
    return {
        "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "turn_id": "1",
        "transcript_path": None,
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.6",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "call_1",
    }


def gemini(cwd: Path, tool: str, tool_input: dict[str, object]) -> dict[str, object]:
    return {
        "session_id": "s-1",
        "transcript_path": "",
        "cwd": str(cwd),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-01T00:00:00.000Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def cursor_shell(cwd: Path, command: str) -> dict[str, object]:
    return {
        "conversation_id": "c-1",
        "generation_id": "g-1",
        "model": "default",
        "hook_event_name": "beforeShellExecution",
        "cursor_version": "3.2.0",
        "workspace_roots": [str(cwd)],
        "user_email": None,
        "command": command,
        "cwd": str(cwd),
    }


def cursor_tool(cwd: Path, tool: str, tool_input: dict[str, object]) -> dict[str, object]:
    body = cursor_shell(cwd, "")
    del body["command"]
    body.update({"hook_event_name": "preToolUse", "tool_name": tool, "tool_input": tool_input,
                 "tool_use_id": "t-1"})  # fmt: skip
    return body


def copilot(cwd: Path, tool: str, args: dict[str, object]) -> dict[str, object]:
    return {"timestamp": 1764547200000, "cwd": str(cwd), "toolName": tool,
            "toolArgs": json.dumps(args)}  # fmt: skip


def verdict(agent: str, body: dict[str, object], cwd: Path) -> str:
    """``deny`` or ``pass`` (asserting the answer has the agent's own form)."""

    result = run_sb([f"--hook={agent}"], cwd=cwd, input=json.dumps(body))
    assert result.returncode == 0, result.stderr
    if agent in ("claude-code", "codex", "copilot") and result.stdout == "":
        return "pass"
    answer = json.loads(result.stdout)
    if answer == {}:
        assert agent in ("gemini", "cursor")
        return "pass"
    if agent in ("claude-code", "codex"):
        specific = answer["hookSpecificOutput"]
        assert specific["hookEventName"] == body["hook_event_name"]
        assert specific["permissionDecision"] == "deny" and specific["permissionDecisionReason"]
    elif agent == "gemini":
        assert answer["decision"] == "deny" and answer["reason"]
    elif agent == "cursor":
        assert answer["permission"] == "deny" and answer["agent_message"]
    else:
        assert answer["permissionDecision"] == "deny" and answer["permissionDecisionReason"]
    return "deny"


@pytest.fixture
def world(project: Path) -> Path:
    (project / "scripts").mkdir()
    (project / "scripts" / ".py-sandboxes").write_text("learn=false\n")
    report = project / "scripts" / "report.py"
    report.write_text("#!/usr/bin/env -S python-sb\nprint('report')\n")
    report.chmod(0o755)
    return project


def test_claude_code_tools(world: Path) -> None:
    rules = str(world / "scripts" / ".py-sandboxes")
    cases = [
        ("Bash", {"command": BAD, "description": "Run the report"}, "deny"),
        ("Bash", {"command": GOOD, "timeout": 120000, "run_in_background": False}, "pass"),
        ("Monitor", {"description": "w", "timeout_ms": 300000, "command": BAD}, "deny"),
        ("Monitor", {"description": "w", "timeout_ms": 300000, "command": "tail -f log"}, "pass"),
        ("Monitor", {"description": "w", "timeout_ms": 1000, "ws": {"url": "ws://x"}}, "pass"),
        ("PowerShell", {"command": "python3 scripts/report.py", "description": "x"}, "deny"),
        ("Write", {"file_path": rules, "content": "learn=\n"}, "deny"),
        ("Write", {"file_path": str(world / "notes.md"), "content": "x"}, "pass"),
        ("Edit", {"file_path": rules, "old_string": "false", "new_string": ""}, "deny"),
        (
            "Edit",
            {
                "file_path": str(world / ".claude" / "settings.json"),
                "old_string": "a",
                "new_string": "b",
            },
            "deny",
        ),
        ("NotebookEdit", {"notebook_path": str(world / "n.ipynb"), "new_source": "x"}, "pass"),
        ("MultiEdit", {"file_path": rules, "edits": []}, "deny"),
        ("Read", {"file_path": rules}, "pass"),
        ("FutureShell", {"command": "ls"}, "deny"),  # a tool the hook does not know
        ("mcp__db__query", {"sql": "select 1"}, "deny"),
    ]
    for tool, tool_input, expected in cases:
        assert verdict("claude-code", claude(world, tool, tool_input), world) == expected, tool
    skill = claude(world, "Bash", {"command": BAD}, "PreSkillShellCommand")
    assert verdict("claude-code", skill, world) == "deny"
    skill = claude(world, "Bash", {"command": GOOD}, "PreSkillShellCommand")
    assert verdict("claude-code", skill, world) == "pass"


def test_codex_tools(world: Path) -> None:
    here = f"cd {world} && "
    patch = (
        "*** Begin Patch\n*** Update File: scripts/.py-sandboxes\n@@\n-learn=false\n*** End Patch\n"
    )
    cases = [
        ("Bash", {"command": BAD}, "deny"),
        ("Bash", {"command": here + GOOD}, "pass"),
        ("Bash", {"command": GOOD}, "deny"),  # no workdir in the payload: relative is unknown
        ("Bash", {"command": f"apply_patch <<'EOF'\n{patch}EOF"}, "deny"),
        ("apply_patch", {"command": patch}, "deny"),
        ("apply_patch", {"command": patch.replace("scripts/.py-sandboxes", "src/x.py")}, "pass"),
        ("mcp__fs__write", {"path": "x"}, "deny"),
    ]
    for tool, tool_input, expected in cases:
        assert verdict("codex", codex(world, tool, tool_input), world) == expected, tool_input


def test_gemini_tools(world: Path) -> None:
    rules = str(world / "scripts" / ".py-sandboxes")
    cases = [
        ("run_shell_command", {"command": BAD, "description": "r"}, "deny"),
        ("run_shell_command", {"command": GOOD, "description": "r", "is_background": False},
         "pass"),
        ("run_shell_command", {"command": "./report.py", "dir_path": "scripts"}, "pass"),
        ("run_shell_command", {"command": "cat > .py-sandboxes", "dir_path": "scripts"}, "deny"),
        ("write_file", {"file_path": rules, "content": "learn=\n"}, "deny"),
        ("write_file", {"file_path": "notes.md", "content": "x"}, "pass"),
        ("replace", {"file_path": rules, "old_string": "false", "new_string": ""}, "deny"),
        ("read_file", {"file_path": rules}, "pass"),
        ("some_new_tool", {"x": 1}, "deny"),
    ]  # fmt: skip
    for tool, tool_input, expected in cases:
        assert verdict("gemini", gemini(world, tool, tool_input), world) == expected, tool_input


def test_cursor_events(world: Path) -> None:
    rules = str(world / "scripts" / ".py-sandboxes")
    assert verdict("cursor", cursor_shell(world, BAD), world) == "deny"
    assert verdict("cursor", cursor_shell(world, GOOD), world) == "pass"
    cases = [
        ("Shell", {"command": BAD}, "deny"),
        ("Shell", {"command": GOOD}, "pass"),
        ("Write", {"file_path": rules, "contents": "learn=\n"}, "deny"),
        ("StrReplace", {"file_path": rules, "old_string": "a", "new_string": "b"}, "deny"),
        ("Delete", {"file_path": rules}, "deny"),
        ("Write", {"file_path": str(world / "x.py"), "contents": "x"}, "pass"),
        ("Read", {"file_path": rules}, "pass"),
    ]
    for tool, tool_input, expected in cases:
        assert verdict("cursor", cursor_tool(world, tool, tool_input), world) == expected, tool


def test_copilot_tools(world: Path) -> None:
    cases = [
        ("bash", {"command": BAD, "description": "r", "mode": "sync"}, "deny"),
        ("bash", {"command": GOOD, "description": "r"}, "pass"),
        ("powershell", {"command": "python scripts/report.py"}, "deny"),
        ("write_bash", {"shellId": "1", "input": "python3 x.py\n"}, "deny"),
        ("edit", {"path": "scripts/.py-sandboxes", "old_str": "a", "new_str": "b"}, "deny"),
        ("create", {"path": "scripts/.py-sandboxes", "file_text": "learn=\n"}, "deny"),
        ("create", {"path": "notes.md", "file_text": "x"}, "pass"),
        ("view", {"path": "scripts/.py-sandboxes"}, "pass"),
        ("new_tool", {}, "deny"),
    ]
    for tool, args, expected in cases:
        assert verdict("copilot", copilot(world, tool, args), world) == expected, (tool, args)
