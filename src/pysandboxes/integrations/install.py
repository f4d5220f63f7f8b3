"""``python-sb --install-hook=AGENT [--user]`` and ``--uninstall-hook=AGENT [--user]``.

Writes the registration of ``python-sb --hook=AGENT`` where each agent reads its hooks, for the
project in the current directory or (``--user``) for every project of the user:

=========== ===================================== ==========================================
agent       project                               user (``--user``)
=========== ===================================== ==========================================
claude-code ``.claude/settings.json``             ``$CLAUDE_CONFIG_DIR/settings.json``
            (+ ``.claude/skills/python-sb/``)     (default ``~/.claude``; + the skill)
codex       ``.codex/hooks.json``                 ``$CODEX_HOME/hooks.json`` (``~/.codex``)
gemini      ``.gemini/settings.json``             ``~/.gemini/settings.json``
cursor      ``.cursor/hooks.json``                ``~/.cursor/hooks.json``
copilot     ``.github/hooks/python-sb.json`` at   ``$COPILOT_HOME/hooks/python-sb.json``
            the git root (where Copilot reads it)
=========== ===================================== ==========================================

Every entry fails closed where the agent allows it (Claude Code ``onFailure: "block"``, Cursor
``failClosed: true``); after writing, the installer prints what the user must still do for the
hook to be active (:func:`notes`: trusting the project in Codex and Gemini, a new session...)
and says which agents let a failing hook through.

The other settings of a shared file are kept; the hook's own entry is recognized by its command
(``--hook=AGENT``), replaced on a second install (so installing twice changes nothing) and
removed by ``--uninstall-hook``. A file that is not valid JSON is left untouched and reported.
Hook options after ``--user`` (``--unparsable=allow``, ``--allow-config=ci.py-sandboxes``...)
are written into the registered command; ``--hook-command=CMD`` replaces the path of
``python-sb`` in it (default: the absolute path of the running ``python-sb``).
"""

from __future__ import annotations

import json
import os
import sys

from pysandboxes.integrations.hook import AGENTS

__all__ = ["install", "main", "target_file", "uninstall"]

PROG = "python-sb"
SKILL_NAME = "python-sb"


class InstallError(Exception):
    """A registration that cannot be written (reported, exit status 2, nothing changed)."""


def main(words: list[str], *, remove: bool = False) -> int:
    option = "--uninstall-hook" if remove else "--install-hook"
    if not words or words[0] not in AGENTS:
        given = words[0] if words else "(none)"
        sys.stderr.write(
            f"{PROG}: {option}: unknown agent {given!r} (one of {', '.join(AGENTS)})\n"
            f"usage: {PROG} {option}=AGENT [--user]"
            + ("" if remove else " [--hook-command=CMD] [hook options]")
            + "\n"
        )
        return 2
    agent, rest = words[0], words[1:]
    user = "--user" in rest
    rest = [w for w in rest if w != "--user"]
    command = default_command()
    options: list[str] = []
    for word in rest:
        if word.startswith("--hook-command=") and not remove:
            command = word.split("=", 1)[1]
        elif not remove:
            options.append(word)
        else:
            sys.stderr.write(f"{PROG}: {option}: unexpected argument {word!r}\n")
            return 2
    try:
        if options:
            from pysandboxes.integrations.hook import HookError, parse_options

            try:
                parse_options(options)
            except HookError as exc:
                raise InstallError(str(exc).splitlines()[0]) from None
        base = os.path.expanduser("~") if user else os.getcwd()
        if remove:
            changed = uninstall(agent, base, user=user)
            verb = "removed from" if changed else "not found in"
        else:
            changed = install(agent, base, user=user, command=command, options=options)
            verb = "written to" if changed else "already in"
    except InstallError as exc:
        sys.stderr.write(f"{PROG}: {option}={agent}: {exc}\n{PROG}: nothing was changed\n")
        return 2
    for path in changed or [target_file(agent, base, user=user)]:
        sys.stdout.write(f"{PROG}: the {agent} hook: {verb} {path}\n")
    if not remove:
        for note in notes(agent, target_file(agent, base, user=user), user=user):
            sys.stdout.write(f"{PROG}: {note}\n")
    return 0


def notes(agent: str, path: str, *, user: bool) -> list[str]:
    """What the user must still do for the hook in ``path`` to be active, and what the agent
    does when the hook fails (docs/agents.md has the same table)."""

    project = os.path.dirname(os.path.dirname(path)) if not user else ""
    if agent == "claude-code":
        where = "this user's sessions" if user else "sessions started in this project"
        return [
            f"to do: start a new Claude Code session ({where} read the hooks at start; /hooks "
            "shows them); `claude doctor` lists the file under 'Invalid settings' if Claude "
            "Code cannot load it",
            "fails closed: yes (onFailure: block: a hook that cannot start, times out or "
            "answers nonsense blocks the tool call)",
        ]
    if agent == "codex":
        trust = (
            'the project must be trusted (trust_level = "trusted" under '
            f'[projects."{project}"] in $CODEX_HOME/config.toml, or accept Codex\'s trust '
            "prompt) and "
            if not user
            else ""
        )
        return [
            f"to do: {trust}the hook itself must be trusted: open Codex, run /hooks and trust "
            "it (until then Codex lists it as untrusted and does not run it)",
            "fails closed: NO, Codex has no setting for it: a hook that cannot start or times "
            "out lets the command run (keep the registered python-sb command working)",
        ]
    if agent == "gemini":
        return [
            "to do: Gemini CLI skips every hook, the user's too, in a folder that is not "
            "trusted: trust each project folder (`gemini trust` in it, or /permissions trust "
            "in a session); it may also ask to trust this project's hooks once",
            "fails closed: NO, Gemini CLI treats a failing hook as non-fatal: the tool runs",
        ]
    if agent == "cursor":
        return [
            "to do: nothing more; Cursor reads hooks.json when it starts (restart it if it is "
            "running)",
            "fails closed: yes (failClosed: true on each entry)",
        ]
    return [
        "to do: Copilot CLI reads the hooks of a folder it trusts: accept its folder trust "
        "prompt for this repository (--trust-folder for one prompt-mode run)"
        if not user
        else "to do: start a new Copilot CLI session",
        "fails closed: NO, Copilot CLI documents no setting for it: a hook that cannot start "
        "lets the tool run",
    ]


def default_command() -> str:
    """The absolute path of the running ``python-sb`` (an agent's PATH may not have it)."""

    from pysandboxes.integrations.check import quote

    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if os.path.basename(argv0) == PROG:
        return quote(os.path.abspath(argv0))
    return PROG


def target_file(agent: str, base: str, *, user: bool) -> str:
    """Where ``agent`` reads hook registrations (``base``: the project, or HOME)."""

    if agent == "codex" and user and os.environ.get("CODEX_HOME"):
        return os.path.join(os.environ["CODEX_HOME"], "hooks.json")
    if agent == "claude-code" and user and os.environ.get("CLAUDE_CONFIG_DIR"):
        return os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json")
    if agent == "copilot":
        if user:
            home = os.environ.get("COPILOT_HOME") or os.path.join(base, ".copilot")
            return os.path.join(home, "hooks", "python-sb.json")
        # Copilot CLI reads .github/hooks at the root of the git repository, not in a
        # sub-directory: the file goes there
        return os.path.join(git_root(base) or base, ".github", "hooks", "python-sb.json")
    relative = {
        "claude-code": (".claude", "settings.json"),
        "codex": (".codex", "hooks.json"),
        "gemini": (".gemini", "settings.json"),
        "cursor": (".cursor", "hooks.json"),
    }[agent]
    return os.path.join(base, *relative)


def git_root(directory: str) -> str | None:
    """The root of the git work tree holding ``directory`` (a ``.git`` directory or file), or
    None outside one."""

    here = os.path.abspath(directory)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def skill_file(base: str, *, user: bool = False) -> str:
    if user and os.environ.get("CLAUDE_CONFIG_DIR"):
        return os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "skills", SKILL_NAME, "SKILL.md")
    return os.path.join(base, ".claude", "skills", SKILL_NAME, "SKILL.md")


def hook_command(agent: str, command: str, options: list[str]) -> str:
    """The registered shell command: ``command`` as given (``--hook-command`` is shell text,
    e.g. ``uvx --from pysandboxes python-sb``), then the hook and its options, quoted."""

    from pysandboxes.integrations.check import quote

    return " ".join([command, f"--hook={agent}", *(quote(o) for o in options)])


#: The tools each agent's matcher names: every tool that runs a command or writes a file (the
#: hook refuses those it cannot judge, such as PowerShell, rather than letting them through).
MATCHERS = {
    "claude-code": "Bash|Monitor|PowerShell|Write|Edit|MultiEdit|NotebookEdit",
    "claude-code-skill": "Bash|PowerShell",
    "codex": "Bash|apply_patch|write_stdin|js_repl",
    "gemini": "run_shell_command|write_file|replace|edit",
    "cursor": "Shell|Write|StrReplace|Edit|MultiEdit|Delete|EditNotebook",
}


def entry(agent: str, command: str) -> list[tuple[str, dict[str, object]]]:
    """The registration entries of the hook for ``agent``: (event name, entry)."""

    if agent == "claude-code":
        hook = {"type": "command", "command": command, "timeout": 30, "onFailure": "block"}
        return [
            ("PreToolUse", {"matcher": MATCHERS["claude-code"], "hooks": [hook]}),
            # the shell commands of a skill's or slash command's text (``!`cmd` ``), which
            # run before any tool call
            ("PreSkillShellCommand", {"matcher": MATCHERS["claude-code-skill"], "hooks": [hook]}),
        ]
    if agent == "codex":
        hook = {"type": "command", "command": command, "timeout": 30}
        return [("PreToolUse", {"matcher": MATCHERS["codex"], "hooks": [hook]})]
    if agent == "gemini":
        hook = {"type": "command", "command": command, "name": "python-sb", "timeout": 10000}
        return [("BeforeTool", {"matcher": MATCHERS["gemini"], "hooks": [hook]})]
    if agent == "cursor":
        return [
            ("beforeShellExecution", {"command": command, "failClosed": True, "timeout": 30}),
            (
                "preToolUse",
                {
                    "command": command,
                    "matcher": MATCHERS["cursor"],
                    "failClosed": True,
                    "timeout": 30,
                },
            ),
        ]
    return [("preToolUse", {"type": "command", "bash": command, "timeoutSec": 10})]


def _ours(agent: str, item: object) -> bool:
    """An entry written by this installer (its command runs ``--hook=AGENT``)."""

    marker = f"--hook={agent}"
    text = json.dumps(item)
    return marker in text


def load(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"{path}: cannot be read: {exc.strerror}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix it first") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object")
    return data


def save(path: str, data: dict[str, object]) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    temporary = f"{path}.python-sb-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2) + "\n")
    os.replace(temporary, path)


def _hooks_table(data: dict[str, object], path: str) -> dict[str, object]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not a JSON object")
    return hooks


def install(agent: str, base: str, *, user: bool, command: str, options: list[str]) -> list[str]:
    """Register the hook (and for Claude Code the skill); the files changed."""

    path = target_file(agent, base, user=user)
    data = load(path)
    before = json.dumps(data, sort_keys=True)
    if agent in ("cursor", "copilot"):
        data.setdefault("version", 1)
    hooks = _hooks_table(data, path)
    for event, item in entry(agent, hook_command(agent, command, options)):
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InstallError(f"{path}: hooks.{event} is not a JSON list")
        kept = [e for e in entries if not _ours(agent, e)]
        hooks[event] = [*kept, item]
    changed = []
    if json.dumps(data, sort_keys=True) != before:
        save(path, data)
        changed.append(path)
    if agent == "claude-code":
        skill = skill_file(base, user=user)
        text = skill_text()
        try:
            with open(skill, encoding="utf-8") as handle:
                same = handle.read() == text
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(skill), exist_ok=True)
            with open(skill, "w", encoding="utf-8") as handle:
                handle.write(text)
            changed.append(skill)
    return changed


def uninstall(agent: str, base: str, *, user: bool) -> list[str]:
    """Remove the hook's entries (and the file, when nothing else is left in it)."""

    path = target_file(agent, base, user=user)
    changed = []
    if os.path.exists(path):
        data = load(path)
        hooks = data.get("hooks")
        if isinstance(hooks, dict):
            found = False
            for event in list(hooks):
                entries = hooks[event]
                if isinstance(entries, list) and any(_ours(agent, e) for e in entries):
                    found = True
                    hooks[event] = [e for e in entries if not _ours(agent, e)]
                    if not hooks[event]:
                        del hooks[event]
            if found:
                if not hooks:
                    del data["hooks"]
                if not data or (set(data) == {"version"} and agent in ("cursor", "copilot")):
                    os.remove(path)
                    _prune(os.path.dirname(path), base)
                else:
                    save(path, data)
                changed.append(path)
    if agent == "claude-code":
        skill = skill_file(base, user=user)
        try:
            with open(skill, encoding="utf-8") as handle:
                ours = handle.read() == skill_text()
        except OSError:
            ours = False
        if ours:
            os.remove(skill)
            _prune(os.path.dirname(skill), base)
            changed.append(skill)
    return changed


def _prune(directory: str, base: str) -> None:
    """Remove ``directory`` and its parents while they are empty, up to ``base`` (excluded):
    the folders install created (``.claude/skills/python-sb``, ``.github/hooks``), once
    nothing else is in them. A folder holding anything else is left as it is."""

    base = os.path.abspath(base)
    directory = os.path.abspath(directory)
    while directory.startswith(base + os.sep) and directory != base:
        try:
            os.rmdir(directory)  # fails, harmlessly, on a folder that is not empty
        except OSError:
            return
        directory = os.path.dirname(directory)


def skill_text() -> str:
    """The SKILL.md shipped with the package (the same as ``coding-agents/python-sb/``)."""

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "SKILL.md"), encoding="utf-8") as handle:
        return handle.read()
