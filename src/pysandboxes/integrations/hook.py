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
output, or ``{}``; for Cursor too: its ``permission: allow`` would run the command without
asking): the hook refuses, it never approves on the user's behalf. A tool the hook does not
know is refused (:data:`TOOLS`). A payload it cannot read, and any error of the hook itself,
is a refusal: a hook that fails open protects nothing. ``AGENT`` may also be ``shell``: the
command text on stdin, the verdict on stdout (exit status 1 when refused), for people and
scripts.

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


#: The tools of each agent, by what the hook reads in them (names as each agent's current
#: source gives them in the hook payload; tests/e2e/test_hook_payloads.py cites the sources).
#: ``shell``: a command string, parsed as bash; ``foreign``: a command in a shell the hook does
#: not parse (PowerShell); ``edit``: writes the files it names; ``patch``: a Codex patch;
#: ``keys``: text typed into a running shell; ``code``: runs code the hook cannot read. A tool
#: in ``other`` runs no command and writes no file the agent names. A tool that is in no list
#: is refused: a new tool of a new release is not let through unchecked.
TOOLS: dict[str, dict[str, tuple[str, ...]]] = {
    "claude-code": {
        "shell": ("Bash", "Monitor"),
        "foreign": ("PowerShell",),
        "edit": ("Write", "Edit", "MultiEdit", "NotebookEdit"),
        "code": ("REPL", "Eval"),
        "other": (
            "Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "Task", "Agent",
            "ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "Skill", "SlashCommand",
            "BashOutput", "KillShell", "KillBash", "TaskStop", "TaskCreate", "TaskGet",
            "TaskUpdate", "TaskList", "ToolSearch", "LSP", "ListMcpResources", "ReadMcpResource",
            "ReadMcpResourceDir", "RefreshMcpTools", "SendMessage", "CronCreate", "CronDelete",
            "CronList", "ScheduleWakeup", "RemoteTrigger", "Workflow", "EnterWorktree",
            "ExitWorktree", "ReportFindings", "PushNotification", "ReadNotifications",
            "ProposeSkills", "ProposeGoal",
        ),
    },
    "codex": {
        "shell": ("Bash", "shell", "shell_command", "exec_command", "local_shell",
                  "container.exec", "unified_exec"),
        "patch": ("apply_patch",),
        "keys": ("write_stdin",),
        "code": ("js_repl",),
        "other": ("update_plan", "view_image", "web_search", "read_file", "list_dir",
                  "grep_files", "request_user_input"),
    },
    "gemini": {
        "shell": ("run_shell_command",),
        "edit": ("write_file", "replace", "edit"),
        "other": (
            "read_file", "read_many_files", "glob", "grep_search", "search_file_content",
            "list_directory", "google_web_search", "web_fetch", "write_todos", "save_memory",
            "activate_skill", "ask_user", "complete_task", "enter_plan_mode", "exit_plan_mode",
            "get_internal_docs", "invoke_agent", "list_mcp_resources", "read_mcp_resource",
            "update_topic",
        ),
    },
    "cursor": {
        "shell": ("Shell", "run_terminal_cmd"),
        "edit": ("Write", "StrReplace", "Edit", "MultiEdit", "Delete", "EditNotebook",
                 "edit_file", "search_replace", "delete_file"),
        "other": ("Read", "Grep", "Glob", "LS", "SemanticSearch", "WebSearch", "WebFetch",
                  "TodoWrite", "Task", "read_file", "grep", "codebase_search", "list_dir"),
    },
    "copilot": {
        "shell": ("bash",),
        "foreign": ("powershell",),
        "keys": ("write_bash",),
        "edit": ("edit", "create", "write", "str_replace_editor", "apply_patch"),
        "other": ("view", "glob", "grep", "rg", "web_fetch", "fetch", "report_intent", "think",
                  "task", "update_todo", "read_bash", "stop_bash", "list_bash", "read_powershell",
                  "stop_powershell", "list_powershell", "fetch_copilot_cli_documentation"),
    },
}  # fmt: skip


def tool_kind(agent: str, tool: object) -> str:
    """What the hook reads in ``tool`` of ``agent`` (a key of :data:`TOOLS`), or ``unknown``."""

    for kind, names in TOOLS.get(agent, {}).items():
        if tool in names:
            return kind
    return "unknown"


class HookError(Exception):
    """A payload or a hook option the hook cannot use (answered as a refusal)."""


def main(words: list[str]) -> int:
    """``python-sb --hook=AGENT [options]``: read stdin, answer on stdout; the exit status."""

    if not words or words[0] not in (*AGENTS, "shell"):
        given = words[0] if words else "(none)"
        sys.stderr.write(f"{PROG}: --hook: unknown agent {given!r}\n{USAGE}")
        return 2
    agent = words[0]
    raw = b""
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
    text, status = answer(agent, reasons, _event(raw))
    if text:
        sys.stdout.write(text + "\n")
    if reasons:
        sys.stderr.write("\n".join(reasons) + "\n")
    return status


def _event(raw: object) -> str:
    """The payload's ``hook_event_name`` (for the answer), or ``""``."""

    try:
        assert isinstance(raw, bytes)
        payload = jsonlite.loads(raw.decode("utf-8"))
    except Exception:
        return ""
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    return event if isinstance(event, str) else ""


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
    if kind == "refuse":
        assert isinstance(value, str)
        return [value]
    known = isinstance(cwd, str) and bool(cwd)
    checker = Checker(settings, cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if not known:
        checker.start = None  # the directory the command runs in is unknown
        checker.unknown_directory = (
            "Codex does not tell the hook the directory (workdir) the command runs in"
            if agent == "codex"
            else "the agent does not say in which directory the command runs"
        )
    if kind == "edit":
        assert isinstance(value, list)
        base = cwd if isinstance(cwd, str) and cwd else os.getcwd()
        paths = [p for p in value if checker.rule_files_in(os.path.join(base, p), recursive=False)]
        if not paths:
            return []
        what = (
            f"the rule file {paths[0]}: rule files are the permission manifest"
            if is_rule_file(paths[0])
            else f"{paths[0]}, where the coding-agent hook is registered: the hook is set up"
        )
        return [
            f"{PROG} hook: refused: this edit changes {what}, changed by a person, not by the "
            "agent.\n" + ADVICE
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
    """``(kind, value, cwd)``: ``("shell", command, cwd)``, ``("edit", [paths], cwd)``,
    ``("refuse", reason, cwd)`` or ``("other", None, None)``. ``cwd`` is None when the agent
    does not say in which directory the command runs (Codex's shell tools take a ``workdir``
    the payload does not carry): relative scripts are then refused (fail closed)."""

    cwd = payload.get("cwd")
    if agent == "cursor":
        event = payload.get("hook_event_name")
        if event in (None, "beforeShellExecution"):
            return "shell", _text(payload.get("command"), "command"), cwd
        if event != "preToolUse":
            return "other", None, None
        tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    elif agent == "copilot":
        tool, tool_input = payload.get("toolName"), payload.get("toolArgs")
        if isinstance(tool_input, str):
            try:
                tool_input = jsonlite.loads(tool_input) if tool_input.strip() else {}
            except ValueError:
                raise HookError("the copilot toolArgs are not JSON; refused") from None
    else:
        tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if isinstance(tool_input, str) and agent == "cursor":
        try:
            tool_input = jsonlite.loads(tool_input)
        except ValueError:
            tool_input = {"command": tool_input}
    if not isinstance(tool_input, dict):
        tool_input = {}
    kind = tool_kind(agent, tool)
    name = tool if isinstance(tool, str) else repr(tool)
    if kind == "other":
        return "other", None, None
    if kind == "shell":
        command = tool_input.get("command")
        if agent == "claude-code" and tool == "Monitor" and command is None:
            return "other", None, None  # a Monitor on a WebSocket (``ws``) runs no command
        if isinstance(command, list) and all(isinstance(w, str) for w in command):
            from pysandboxes.integrations.check import quote

            command = " ".join(quote(w) for w in command)
        directory = tool_input.get("workdir") or tool_input.get("dir_path")
        directory = directory or tool_input.get("directory") or tool_input.get("cwd")
        directory = directory or tool_input.get("working_directory")
        roots = payload.get("workspace_roots")
        if agent == "cursor" and not isinstance(cwd, str) and isinstance(roots, list) and roots:
            cwd = roots[0]  # preToolUse: the workspace, where Cursor's shell starts
        if isinstance(directory, str) and directory and isinstance(cwd, str):
            cwd = os.path.join(cwd, directory)
        elif agent == "codex":
            cwd = None  # Codex runs the command in its workdir, which the payload omits
        return "shell", _text(command, "tool_input.command"), cwd
    if kind == "keys":
        text = tool_input.get("chars", tool_input.get("input"))
        return "shell", _text(text, "the text typed into the shell"), None
    if kind == "patch":
        from pysandboxes.integrations.check import _patch_targets

        texts = [v for v in tool_input.values() if isinstance(v, str)]
        if not texts:
            raise HookError(f"the {name} payload has no patch text; refused")
        return "edit", [p for t in texts for p in _patch_targets(t)], cwd
    if kind == "edit":
        paths = [
            v
            for k in ("file_path", "path", "notebook_path", "target_file", "target_notebook")
            if isinstance(v := tool_input.get(k), str)
        ]
        return "edit", paths, cwd
    if kind == "foreign":
        return (
            "refuse",
            (
                f"{PROG} hook: refused: the {name} tool runs a command in a shell the hook "
                "does not read (it parses bash), so it cannot tell whether the command runs "
                "Python outside its rules. Use the bash shell tool for this command.\n" + ADVICE
            ),
            cwd,
        )
    if kind == "code":
        return (
            "refuse",
            (
                f"{PROG} hook: refused: the {name} tool runs code the hook cannot read. Run the "
                "command with the shell tool instead.\n" + ADVICE
            ),
            cwd,
        )
    return (
        "refuse",
        (
            f"{PROG} hook: refused: the tool {name} is not one the hook knows, so it cannot tell "
            "whether it runs a command or changes a rule file (a hook that lets unknown tools "
            "through protects nothing). Use the agent's shell or edit tool, or ask the user to "
            "allow the tool outside the hook's matcher.\n" + ADVICE
        ),
        cwd,
    )


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise HookError(f"the payload has no {field} string; refused")
    return value


def answer(agent: str, reasons: list[str], event: str = "") -> tuple[str, int]:
    """The agent's answer (stdout text, exit status) for a refusal (``reasons``) or not;
    ``event``: the payload's event name where the answer names it (Claude Code's
    ``PreToolUse`` and ``PreSkillShellCommand``)."""

    reason = "\n".join(reasons)
    if agent in ("claude-code", "codex"):
        if not reasons:
            return "", 0
        if agent == "codex" or event not in ("PreToolUse", "PreSkillShellCommand"):
            event = "PreToolUse"
        out: dict[str, object] = {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    elif agent == "gemini":
        out = {"decision": "deny", "reason": reason} if reasons else {}
    elif agent == "cursor":
        if not reasons:
            # no decision: Cursor's own flow (its allow list, auto-run mode or the user's
            # approval) decides; {"permission": "allow"} would run the command without asking
            out = {}
        else:
            first = reason.splitlines()[1] if len(reason.splitlines()) > 1 else reason
            out = {
                "permission": "deny",
                "user_message": f"{PROG} hook refused the command: {first.lstrip('- ')}",
                "agent_message": reason,
            }
            if event == "preToolUse":  # the tool hook's own fields
                out.update({"decision": "deny", "reason": reason})
    else:  # copilot
        if not reasons:
            return "", 0
        out = {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return jsonlite.dumps(out), 0
