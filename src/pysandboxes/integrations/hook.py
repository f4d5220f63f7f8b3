"""``python-sb --hook=AGENT``: the pre-execution hook of five coding agents.

The agent starts the hook before each tool call, with a JSON payload on stdin; the hook finds
the shell command (or the file an edit tool writes) in it, checks it
(:mod:`pysandboxes.integrations.check`), and answers in that agent's own format:

========== ============================== =============================================
agent      payload (stdin)                refusal (stdout, exit status 0)
========== ============================== =============================================
claude-code PreToolUse: ``tool_name``,    ``hookSpecificOutput.permissionDecision: deny``
           ``tool_input.command``          and ``permissionDecisionReason``
codex      PreToolUse, same shape          the same (Codex honours only ``deny``)
gemini     BeforeTool: ``tool_name``       ``decision: deny``, ``reason``
           ``run_shell_command``
cursor     beforeShellExecution:           ``permission: deny``, ``user_message``,
           ``command``, ``cwd``            ``agent_message``
copilot    preToolUse: ``toolName``,       ``permissionDecision: deny``,
           ``toolArgs`` (a JSON string)    ``permissionDecisionReason``
========== ============================== =============================================

An allowed command gets the answer that leaves the agent's own permission flow in charge (no
output, ``{}``, or Cursor's ``permission: allow``): the hook refuses, it never approves on the
user's behalf. A payload it cannot read, and any error of the hook itself, is a refusal: a
hook that fails open protects nothing. ``AGENT`` may also be ``shell``: the command text on
stdin, the verdict on stdout (exit status 1 when refused), for people and scripts.

This runs before every shell command an agent issues: only ``os`` and ``sys``, the parser and
a small JSON codec (:mod:`~pysandboxes.integrations.jsonlite`; ``json`` would import ``re``)
are imported.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.integrations import jsonlite

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from pysandboxes.integrations.check import Finding, Settings

__all__ = ["AGENTS", "decide", "main"]

AGENTS = ("claude-code", "codex", "gemini", "cursor", "copilot")
PROG = "python-sb"

ADVICE = (
    "python-sb runs a Python program with the rights its .py-sandboxes grants. If python-sb "
    "refuses an access the task needs, report the refusal to the user: do not widen the rules "
    "(no --learn, no rule options, no edit of a *.py-sandboxes file)."
)

USAGE = (
    f"usage: {PROG} --hook=AGENT [--unparsable=refuse|allow] [--allow-config=FILE]...\n"
    "                 [--allow-module=NAME]... [--runner=NAME]... [--allow-program=NAME]...\n"
    f"AGENT: {', '.join(AGENTS)}, or shell (the command on stdin, the verdict on stdout)\n"
)


#: The tools that write a file, per agent (an edit of a rule file is refused).
EDIT_TOOLS = {
    "claude-code": ("Write", "Edit", "MultiEdit", "NotebookEdit"),
    "gemini": ("write_file", "replace"),
    "copilot": ("edit", "create", "write"),
}


class HookError(Exception):
    """A payload or a hook option the hook cannot use (answered as a refusal)."""


def main(words: list[str]) -> int:
    """``python-sb --hook=AGENT [options]``: read stdin, answer on stdout; the exit status."""

    if not words or words[0] not in (*AGENTS, "shell"):
        given = words[0] if words else "(none)"
        sys.stderr.write(f"{PROG}: --hook: unknown agent {given!r}\n{USAGE}")
        return 2
    agent = words[0]
    try:
        settings = parse_options(words[1:])
        raw = sys.stdin.buffer.read()
        if agent == "shell":
            return check_shell_text(raw.decode("utf-8", "replace"), settings)
        reasons = decide(agent, raw, settings)
    except HookError as exc:
        reasons = [f"{PROG} hook: {exc}"]
    except Exception as exc:  # fail closed: an error of the hook must not let the command run
        reasons = [f"{PROG} hook: internal error ({type(exc).__name__}: {exc}); refused"]
        if agent == "shell":
            sys.stderr.write(reasons[0] + "\n")
            return 2
    text, status = answer(agent, reasons)
    if text:
        sys.stdout.write(text + "\n")
    if reasons:
        sys.stderr.write("\n".join(reasons) + "\n")
    return status


def parse_options(words: list[str]) -> Settings:
    """The hook's options into a :class:`~pysandboxes.integrations.check.Settings`."""

    from pysandboxes.integrations.check import Settings

    settings = Settings()
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not value:
            raise HookError(f"hook option {word!r} needs a value (--option=VALUE)")
        if key == "--unparsable" and value in ("refuse", "allow"):
            settings.unparsable = value
        elif key == "--allow-config":
            settings.allowed_configs.append(value)
        elif key == "--allow-module":
            settings.allowed_modules.add(value)
        elif key == "--runner":
            settings.runners.add(value)
        elif key == "--allow-program":
            settings.allowed_programs.add(value)
            settings.runners.discard(value)
        else:
            raise HookError(f"unknown hook option {word!r}\n{USAGE}")
    return settings


def check_shell_text(command: str, settings: Settings) -> int:
    from pysandboxes.integrations.check import Checker

    findings = Checker(settings, os.getcwd()).check(command)
    if not findings:
        sys.stdout.write("allowed\n")
        return 0
    sys.stdout.write(render(findings) + "\n")
    return 1


def decide(agent: str, raw: bytes, settings: Settings) -> list[str]:
    """The refusal reasons for the payload ``raw`` of ``agent`` (empty: no objection)."""

    from pysandboxes.integrations.check import Checker, is_rule_file

    try:
        payload = jsonlite.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookError(f"the {agent} payload is not JSON ({exc}); refused") from None
    if not isinstance(payload, dict):
        raise HookError(f"the {agent} payload is not a JSON object; refused")
    kind, value, cwd = extract(agent, payload)
    if kind == "other":
        return []
    checker = Checker(settings, cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if kind == "edit":
        assert isinstance(value, list)
        paths = [p for p in value if is_rule_file(p)]
        if not paths:
            return []
        return [
            f"{PROG} hook: refused: this edit changes the rule file {paths[0]}: rule files are "
            "the permission manifest, changed by a person, not by the agent.\n" + ADVICE
        ]
    assert isinstance(value, str)
    findings = checker.check(value)
    return [render(findings)] if findings else []


def render(findings: Sequence[Finding]) -> str:
    """One refusal text: each reason, what to run instead, and the advice."""

    lines = [f"{PROG} hook: refused:"]
    for finding in findings:
        lines.append(f"- {finding.message}.")
        if finding.instead:
            lines.append(f"  Instead: {finding.instead}")
    lines.append(ADVICE)
    return "\n".join(lines)


def extract(agent: str, payload: dict[str, object]) -> tuple[str, object, object]:
    """``("shell", command, cwd)``, ``("edit", [paths], cwd)`` or ``("other", None, None)``."""

    cwd = payload.get("cwd")
    if agent == "cursor":
        event = payload.get("hook_event_name")
        if event not in (None, "beforeShellExecution"):
            return "other", None, None
        return "shell", _text(payload.get("command"), "command"), cwd
    if agent == "copilot":
        tool = payload.get("toolName")
        args = payload.get("toolArgs")
        if isinstance(args, str):
            try:
                args = jsonlite.loads(args) if args.strip() else {}
            except ValueError:
                raise HookError("the copilot toolArgs are not JSON; refused") from None
        if not isinstance(args, dict):
            args = {}
        if tool in ("bash", "shell"):
            return "shell", _text(args.get("command"), "toolArgs.command"), cwd
        return _edit(args, cwd) if tool in EDIT_TOOLS["copilot"] else ("other", None, None)
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    shell_tools = {"gemini": ("run_shell_command",)}.get(agent, ("Bash", "shell", "exec_command"))
    if tool in shell_tools:
        command = tool_input.get("command")
        if isinstance(command, list) and all(isinstance(w, str) for w in command):
            from pysandboxes.integrations.check import quote

            command = " ".join(quote(w) for w in command)
        directory = tool_input.get("dir_path") or tool_input.get("directory")
        if isinstance(directory, str) and isinstance(cwd, str):
            cwd = os.path.join(cwd, directory)
        return "shell", _text(command, "tool_input.command"), cwd
    if agent == "codex" and tool == "apply_patch":
        paths = []
        for value in tool_input.values():
            if isinstance(value, str):
                for line in value.splitlines():
                    for head in ("*** Add File: ", "*** Update File: ", "*** Delete File: "):
                        if line.startswith(head):
                            paths.append(line[len(head) :].strip())
                    if line.startswith("*** Move to: "):
                        paths.append(line[13:].strip())
        return "edit", paths, cwd
    if tool in EDIT_TOOLS.get(agent, ()):
        return _edit(tool_input, cwd)
    return "other", None, None


def _edit(args: dict[str, object], cwd: object) -> tuple[str, object, object]:
    paths = [v for k in ("file_path", "path", "notebook_path") if isinstance(v := args.get(k), str)]
    return ("edit", paths, cwd) if paths else ("other", None, None)


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise HookError(f"the payload has no {field} string; refused")
    return value


def answer(agent: str, reasons: list[str]) -> tuple[str, int]:
    """The agent's answer (stdout text, exit status) for a refusal (``reasons``) or not."""

    reason = "\n".join(reasons)
    if agent in ("claude-code", "codex"):
        if not reasons:
            return "", 0
        out: dict[str, object] = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    elif agent == "gemini":
        out = {"decision": "deny", "reason": reason} if reasons else {}
    elif agent == "cursor":
        if not reasons:
            out = {"permission": "allow"}
        else:
            first = reason.splitlines()[1] if len(reason.splitlines()) > 1 else reason
            out = {
                "permission": "deny",
                "user_message": f"{PROG} hook refused the command: {first.lstrip('- ')}",
                "agent_message": reason,
            }
    else:  # copilot
        if not reasons:
            return "", 0
        out = {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return jsonlite.dumps(out), 0
