"""What ``python-sb --hook`` refuses in a shell command, and what to run instead.

The command is parsed into a tree (:mod:`pysandboxes.integrations.shell`); every simple command
in it is then looked at, wherever it sits: in a list, a pipeline, a loop, a function body, a
``$(...)``, the string of a ``bash -c``, behind a wrapper (``env``, ``sudo``, ``timeout``,
``xargs``, ``find -exec``, ``uv run``, ``poetry run``...), or on the first line of a script run
directly. A command is refused when it

- runs a Python interpreter on a program (``python x.py``, ``python3 -c``, ``python -``, the
  REPL, ``pypy3``, ``ipython``...) — ``--version``, ``-m venv``, ``-m pip`` and the like run no
  program of the project and pass;
- runs a Python runner that imports the project's code (``pytest``, ``jupyter``...);
- runs a script whose shebang is a bare Python;
- runs ``python-sb`` with an option that widens or replaces the rules (``--learn``, ``--audit``,
  any ``--KEY=VALUE`` rule, a ``--pysandboxes-config`` other than the script's own or an
  allowed one), without a rule file (learning mode), with variables that load code into its
  own interpreter (``PYTHONPATH``, ``LD_PRELOAD``...), or taken from a URL or a path;
- sets, unsets or clears a variable the rule file in effect reads (``OS_SANDBOX=none
  python-sb x.py`` under ``os-sandbox=${OS_SANDBOX:-landlock}``, in every spelling a shell
  accepts, the record being ``--explain``'s: ``policy.loader.variables_read``);
- writes, moves, deletes or patches a rule file (``*.py-sandboxes``) or the agent's hook
  registration (``apply_patch``/``patch``/``git apply`` included);
- or cannot be read: a syntax this parser does not know, a program name computed at run time
  (``$X args``), a shell reading its commands from a pipe, a script whose first line cannot be
  read. These are refused too (fail closed) unless the hook was told ``--unparsable=allow``.

Each refusal carries the command to run instead.
"""

from __future__ import annotations

import os

from pysandboxes.integrations.shell import Node, Redirect, ShellSyntaxError, Word, parse

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

    Unwrap = Callable[["Checker", list["_Arg"]], list["_Arg"]]

__all__ = ["Checker", "Finding", "Settings"]

#: Refusal kinds that mean "the hook cannot see", governed by ``--unparsable``.
UNSURE = frozenset({"unparsable", "dynamic", "unreadable"})
_MAX_DEPTH = 12
_MAX_VALUES = 16

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
#: ``python -m MODULE`` that run no program of the project (environment management).
DEFAULT_ALLOWED_MODULES = frozenset({"venv", "pip", "ensurepip", "virtualenv", "pipx", "uv"})
#: Python programs that import and run the project's own code.
DEFAULT_RUNNERS = frozenset({"pytest", "py.test", "jupyter", "jupyter-notebook", "jupyter-lab"})
#: The key, in the variables of a scope, of the current directory (``cd`` is followed).
CWD = "\0cwd"
#: Set when a wrapper replaces the environment (``env -i``, ``sudo``, ``exec -c``, a file of
#: variables): its value says by what. Every variable the rules read may then change.
CLEARED = "\0cleared"
#: Set when a wrapper runs the command in another file-system view (``chroot``, ``nsenter
#: -m``, ``bwrap``, ``unshare --root``): the files the hook reads are not the command's.
FS_VIEW = "\0fs"
#: The value of a variable the command unsets (``unset X``, ``env -u X``): a change only when
#: the variable is set where the command starts.
UNSET = "\0unset"
#: Variables taken from the hook's own environment when the command does not set them: those
#: that name places (a command name made of another variable is refused as unknown).
SAFE_ENVIRON = frozenset(
    {"HOME", "USER", "LOGNAME", "TMPDIR", "PWD", "VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT"}
)
#: Variables that make python-sb's own interpreter load code before it applies any rule.
LAUNCHER_VARIABLES = frozenset({"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH"})
#: PYTHON* variables that load no code (every other one is refused for python-sb).
HARMLESS_PYTHON_VARIABLES = frozenset(
    {
        "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8",
        "PYTHONHASHSEED", "PYTHONFAULTHANDLER", "PYTHONCOERCECLOCALE", "PYTHONLEGACYWINDOWSSTDIO",
        "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTHONOPTIMIZE", "PYTHONVERBOSE",
    }
)  # fmt: skip
#: Builtins that read a value into a variable the hook cannot know.
_READERS = frozenset({"read", "mapfile", "readarray", "getopts"})
#: Builtins whose NAME=VALUE arguments set shell variables.
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})
RULE_SUFFIXES = (".py-sandboxes", "py-sandboxes.profile")
#: Commands whose file arguments are modified (any argument that names a rule file is refused).
_WRITERS_ANY = frozenset(
    {
        "rm", "unlink", "shred", "truncate", "touch", "chmod", "chown", "chgrp", "tee", "mv",
        "chattr", "setfacl", "sponge", "sudoedit", "ed", "ex", "vi", "vim", "nvim", "nano",
        "emacs", "editor", "mcedit",
    }
)  # fmt: skip
#: Coding agents' command lines, and the options that start one without its hooks.
_AGENT_CLIS = {
    "claude": ("--bare",),
    "codex": ("--dangerously-bypass-hook-trust",),
}
#: Commands that apply a patch (the files it changes are read from the patch).
_PATCHERS = frozenset({"apply_patch", "applypatch", "patch"})
#: Commands that modify only their last argument (``cp SRC DEST``, ``ln TARGET NAME``...).
_WRITERS_LAST = frozenset({"cp", "ln", "install", "rsync", "scp"})


class Finding:
    """One reason to refuse: a ``kind``, the ``message`` for the agent, and ``instead``, the
    command to run in its place (may be empty)."""

    __slots__ = ("instead", "kind", "message")

    def __init__(self, kind: str, message: str, instead: str = "") -> None:
        self.kind = kind
        self.message = message
        self.instead = instead

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, {self.message!r})"


class Settings:
    """What a deployment of the hook may change (``python-sb --hook=AGENT [options]``)."""

    def __init__(self) -> None:
        self.unparsable = "refuse"
        self.allowed_configs: list[str] = []
        self.allowed_modules = set(DEFAULT_ALLOWED_MODULES)
        self.runners = set(DEFAULT_RUNNERS)
        self.allowed_programs: set[str] = set()


class _Arg:
    """A word once expanded as far as the hook can: its value, or None when unknown;
    ``loose`` is the value with the unknown parts left as written (``$ARGS``)."""

    __slots__ = ("loose", "raw", "value")

    def __init__(self, value: str | None, raw: str, loose: str | None = None) -> None:
        self.value = value
        self.raw = raw
        self.loose = value if loose is None and value is not None else (loose or raw)


def quote(text: str) -> str:
    safe = "@%+=:,./-_"
    if text and all(c.isalnum() or c in safe for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _join(args: list[_Arg]) -> str:
    return " ".join(a.raw if a.value is None else quote(a.value) for a in args)


def is_rule_file(path: str) -> bool:
    """``path`` names a rule file (``*.py-sandboxes`` or a ``*py-sandboxes.profile``)."""

    name = os.path.basename(path.rstrip("/"))
    return name.endswith(RULE_SUFFIXES) or name == ".py-sandboxes"


#: Where the agents read their hook registrations (the last components of the path): changing
#: one can remove the hook, so it is protected like a rule file.
HOOK_CONFIGS = (
    (".claude", "settings.json"),
    (".claude", "settings.local.json"),
    (".codex", "hooks.json"),
    (".codex", "config.toml"),
    (".gemini", "settings.json"),
    (".gemini", "trustedFolders.json"),
    (".cursor", "hooks.json"),
    (".github", "hooks"),
    (".copilot", "hooks"),
    (".copilot", "config.json"),
)


def is_hook_config(path: str) -> bool:
    """``path`` is an agent's hook registration file (``.claude/settings.json``,
    ``.github/hooks/python-sb.json``...)."""

    parts = os.path.normpath(path).split(os.sep)
    for directory, name in HOOK_CONFIGS:
        for i in range(len(parts) - 1):
            if parts[i] == directory and parts[i + 1] == name:
                return True
    return False


def is_protected(path: str) -> bool:
    """A rule file, or a file where an agent reads its hooks: the agent may not change them."""

    return is_rule_file(path) or is_hook_config(path)


def _in_place(option: str) -> bool:
    """A ``sed``/``perl``/``ruby`` option that edits the files in place (``-i``, ``-i.bak``,
    ``-pi``, ``-Ei``, ``--in-place``)."""

    if option.startswith("--in-place"):
        return True
    return option.startswith("-") and not option.startswith("--") and "i" in option[1:]


def _patch_targets(text: str) -> list[str]:
    """The files a patch names: Codex's ``*** Add/Update/Delete File:`` and ``*** Move to:``
    lines, and a unified or context diff's ``---``/``+++``/``***`` headers, ``diff --git`` and
    ``Index:`` lines (``a/``/``b/`` prefixes kept and dropped, both are checked)."""

    found: list[str] = []
    for line in text.splitlines():
        for head in ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "):
            if line.startswith(head):
                found.append(line[len(head) :].strip())
        if line.startswith(("--- ", "+++ ", "*** ")) and not line.startswith("*** Begin Patch"):
            name = line[4:].split("\t")[0].strip()
            found.extend([name, name[2:] if name[1:2] == "/" else name])
        elif line.startswith("diff --git "):
            found.extend(w[2:] if w[1:2] == "/" else w for w in line[11:].split())
        elif line.startswith(("Index: ", "rename to ", "rename from ", "copy to ")):
            found.append(line.split(" ", 2)[-1].strip())
    return [f for f in found if f and f != "/dev/null"]


def python_like(name: str) -> bool:
    """``python``, ``python3``, ``python3.12``, ``pythonw``, ``pypy3``, ``graalpy``,
    ``ipython``... (a name made of one of those stems and a version), and the ``py``
    launcher."""

    if name == "py":  # the Python launcher (python-launcher on Linux)
        return True
    for stem in ("python", "pypy", "graalpy", "ipython", "jython", "micropython"):
        if name.startswith(stem):
            rest = name[len(stem) :]
            if rest in ("w", "-dbg") or all(c.isdigit() or c == "." for c in rest):
                return True
    return False


class Checker:
    """Checks shell commands against the rules above; one instance per hook call."""

    def __init__(self, settings: Settings | None = None, cwd: str | None = None) -> None:
        self.settings = settings or Settings()
        self.cwd = cwd or os.getcwd()
        #: the directory of the command being checked (after the ``cd`` of the same text), or
        #: None when a ``cd`` went somewhere the hook cannot know
        self.here: str | None = self.cwd
        #: the directory the command text starts in: ``cwd``, or None when the agent does not
        #: say (then only an absolute ``cd`` makes it known)
        self.start: str | None = self.cwd
        #: the environment a wrapper gives the command it runs (``env X=1``, ``sudo``,
        #: ``chroot``...), filled in by the wrapper's unwrap function (see :meth:`set_var`)
        self.wrap_env: dict[str, list[str] | None] = {}
        #: the file a command reads its standard input from (``< FILE``), when known
        self.stdin_file: str | None = None
        self.python_env: dict[str, list[str] | None] = {}
        #: why the starting directory is unknown (``here`` None from the start), for messages
        self.unknown_directory = ""
        self.findings: list[Finding] = []

    # -- entry points ----------------------------------------------------------------------------

    def check(self, command: str) -> list[Finding]:
        """The reasons to refuse ``command`` (empty: it passes)."""

        self.findings = []
        self.here = self.start
        self.check_text(command, {}, 0)
        return self.findings

    def check_text(self, command: str, env: dict[str, list[str] | None], depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.add("unparsable", "commands nested too deeply to be checked")
            return
        try:
            tree = parse(command)
        except ShellSyntaxError as exc:
            self.add(
                "unparsable",
                f"the hook cannot parse this command: {exc}",
                "write it as plain commands (one per line, or joined with && and ;), with "
                "balanced quotes",
            )
            return
        self.walk(tree, env, depth)

    def add(self, kind: str, message: str, instead: str = "") -> None:
        if kind in UNSURE and self.settings.unparsable == "allow":
            return
        self.findings.append(Finding(kind, message, instead))

    # -- the tree --------------------------------------------------------------------------------

    def walk(self, node: Node, env: dict[str, list[str] | None], depth: int) -> None:
        kind = node.kind
        if kind == "simple":
            self.simple(node, env, depth, piped=False)
            return
        for word in node.words:
            self.walk_nested(word.nested, env, depth)
            self.side_assignments(word, env)
        if kind == "arith":
            for name in _arith_assigned(node.name):
                env[name] = None
        if kind == "pipeline":
            for i, child in enumerate(node.children):
                if child.kind == "simple":
                    self.simple(child, dict(env), depth, piped=i > 0)
                else:
                    self.walk(child, dict(env), depth)
        elif kind == "subshell":
            for child in node.children:
                self.walk(child, dict(env), depth)
        elif kind == "for" and node.name:
            values: list[str] | None = []
            for word in node.words:
                expanded = self.expand(word, env)
                if expanded is None or values is None:
                    values = None
                else:
                    values.extend(expanded)
            env[node.name] = values if node.words else None
            for child in node.children:
                self.walk(child, env, depth)
        else:
            for child in node.children:
                self.walk(child, env, depth)
        for redirect in node.redirects:
            self.redirect(redirect, env, depth)

    def walk_nested(self, nested: list[Node], env: dict[str, list[str] | None], d: int) -> None:
        for sub in nested:
            self.walk(sub, dict(env), d)

    def walk_nested_words(self, node: Node, env: dict[str, list[str] | None], d: int) -> None:
        for _name, value in node.assigns:
            self.walk_nested(value.nested, env, d)
            self.side_assignments(value, env)
        for word in node.words:
            self.walk_nested(word.nested, env, d)
            self.side_assignments(word, env)
        for redirect in node.redirects:
            if redirect.target is not None:
                self.side_assignments(redirect.target, env)

    @staticmethod
    def side_assignments(word: Word, env: dict[str, list[str] | None]) -> None:
        """Variables a word sets while it is expanded: ``${NAME:=value}``, ``${NAME=value}``
        and the assignments of ``$(( NAME = 1 ))`` (values unknown to the hook)."""

        for part in word.parts:
            if part[0] == "pexp" and len(part) > 2:
                name, inner = str(part[1]), str(part[2])
                if (
                    inner[len(name) : len(name) + 2] == ":="
                    or inner[len(name) : len(name) + 1] == "="
                ):
                    env[name] = None
            elif part[0] == "arith":
                for name in _arith_assigned(str(part[1])):
                    env[name] = None

    def redirect(self, redirect: Redirect, env: dict[str, list[str] | None], depth: int) -> None:
        if redirect.target is not None:
            self.walk_nested(redirect.target.nested, env, depth)
        self.walk_nested(redirect.body_nested, env, depth)
        if redirect.op in (">", ">>", ">|", "&>", "&>>", "<>") and redirect.target is not None:
            for value in self.expand(redirect.target, env) or []:
                if self.rule_files_in(value, recursive=False):
                    self.rule_write(value)

    def rule_write(self, path: str) -> None:
        if not is_rule_file(path) and not is_rule_file(os.path.realpath(path)):
            self.add(
                "rules-write",
                f"this command changes {path}, where the coding-agent hook is registered: the "
                "hook that checks the agent's commands is set up by a person, not by the agent",
                "leave the hook's registration as it is",
            )
            return
        self.add(
            "rules-write",
            f"this command changes the rule file {path}: rule files are the permission "
            "manifest, changed by a person, not by the agent",
            "leave the rule file as it is; if python-sb refused an access the task needs, "
            "report the refusal to the user and let them decide",
        )

    def simple(
        self, node: Node, env: dict[str, list[str] | None], depth: int, *, piped: bool
    ) -> None:
        self.walk_nested_words(node, env, depth)
        if not node.words:
            for name, value in node.assigns:
                assign(env, name, self.expand(value, env))
            for redirect in node.redirects:
                self.redirect(redirect, env, depth)
            return
        heredoc: str | None = None
        for redirect in node.redirects:
            self.redirect(redirect, env, depth)
            if redirect.op in ("<<", "<<-") and redirect.body is not None:
                heredoc = redirect.body
            elif redirect.op == "<<<" and redirect.target is not None:
                values = self.expand(redirect.target, env)
                heredoc = values[0] if values and len(values) == 1 else None
        stdin = "pipe" if piped else ("heredoc" if heredoc is not None else "")
        self.stdin_file = None
        for redirect in node.redirects:
            if redirect.op in ("<", "<&"):
                stdin = "file"
                if redirect.op == "<" and redirect.target is not None:
                    values = self.expand(redirect.target, env)
                    self.stdin_file = values[0] if values and len(values) == 1 else None
        first = self.expand(node.words[0], env)
        if first is not None and first[0] in _DECLARE:
            flag_words = [
                w.literal() or "" for w in node.words[1:] if (w.literal() or "")[:1] in "-+"
            ]
            flags = "".join(f[1:] for f in flag_words)
            # -x/+x (un)export an existing variable, export -n un-exports, declare -n makes a
            # name reference; -p, -f, -F only print or name functions
            changes = any(f[:1] == "+" or "x" in f or "n" in f for f in flag_words)
            for word in node.words[1:]:
                values = self.expand(word, env)
                if values and len(values) == 1 and "=" in values[0]:
                    var, _, text = values[0].partition("=")
                    var = var.rstrip("+")
                    assign(env, var, [text])
                    if "n" in flags and _is_plain_name(text):
                        env[text] = None  # a name reference: setting var sets text
                elif word.literal() is None and "=" in word.raw:
                    name = word.raw.partition("=")[0].strip("'\"")
                    if _is_plain_name(name) and all(c.isalnum() or c == "_" for c in name):
                        env[name] = None
                    else:  # a name computed when it runs: any variable may be the one
                        env[CLEARED] = [f"{first[0]} {word.raw}"]
                elif values and len(values) == 1 and _is_plain_name(values[0]) and changes:
                    env[values[0]] = None  # export -n NAME, declare -x/+x NAME: (un)exported
        if first is not None and first[0] == "unset":
            for unset in node.words[1:]:
                unset_name = unset.literal()
                if unset_name and _is_plain_name(unset_name):
                    env[unset_name] = [UNSET]  # an unset variable takes its rule's default
        if first is not None and first[0] == "let":
            for word in node.words[1:]:
                for name in _arith_assigned(word.literal() or word.raw):
                    env[name] = None
        if first is not None and first[0] in _READERS:
            for word in node.words[1:]:
                target = word.literal()
                if target and _is_plain_name(target):
                    env[target] = None
        if first is not None and first[0] == "printf":
            for i, word in enumerate(node.words[1:-1], start=1):
                target = node.words[i + 1].literal()
                if word.literal() == "-v":
                    if target:
                        env[target] = None
                    else:
                        env[CLEARED] = [f"printf -v {node.words[i + 1].raw}"]
        if first is None:
            self.dynamic(node.words[0].raw)
            return
        self.here = self.directory(env)
        if first[0] in ("cd", "pushd"):
            self.change_directory(node, env)
        # The command's environment: the variables set earlier in the text (a plain assignment
        # of an exported variable changes it too) and its own prefix assignments.
        command_env = env
        if node.assigns:
            command_env = dict(env)
            for name, value in node.assigns:
                command_env[name] = self.expand(value, env)
        rest = [self.arg(word, env) for word in node.words[1:]]
        expanded = any(part[0] != "lit" for part in node.words[0].parts)
        for program in first:
            argv = [_Arg(program, node.words[0].raw), *rest]
            if expanded and program.split() != [program]:
                # an unquoted expansion is split into words: "$C" = "python3 x.py"
                argv = [_Arg(w, node.words[0].raw) for w in program.split()] + rest
                if not argv:
                    continue
            self.command(argv, command_env, depth, stdin=stdin, heredoc=heredoc)

    def directory(self, env: dict[str, list[str] | None]) -> str | None:
        if CWD not in env:
            return self.start
        values = env[CWD]
        return values[0] if values and len(values) == 1 else None

    def change_directory(self, node: Node, env: dict[str, list[str] | None]) -> None:
        """``cd DIR`` in this scope: later relative paths are read from DIR."""

        args = [w for w in node.words[1:] if not (w.literal() or "").startswith("-")]
        values = self.expand(args[0], env) if args else [os.path.expanduser("~")]
        here = self.directory(env)
        target = os.path.expanduser(values[0]) if values and len(values) == 1 else ""
        if not target or target == "-" or (here is None and not os.path.isabs(target)):
            env[CWD] = None
            return
        env[CWD] = [os.path.normpath(os.path.join(here or "/", target))]

    def dynamic(self, raw: str) -> None:
        self.add(
            "dynamic",
            f"the program this command runs is computed when it runs ({raw}): the hook "
            "cannot tell what it is",
            "write the program's name literally",
        )

    # -- expansion -------------------------------------------------------------------------------

    def arg(self, word: Word, env: dict[str, list[str] | None]) -> _Arg:
        values = self.expand(word, env)
        if values is not None and len(values) == 1:
            return _Arg(values[0], word.raw)
        loose = []
        for part in word.parts:
            if part[0] == "lit":
                loose.append(str(part[1]))
            elif part[0] == "var":
                known = env.get(str(part[1]))
                loose.append(known[0] if known and len(known) == 1 else "$" + str(part[1]))
            else:
                loose.append("$UNKNOWN")
        return _Arg(None, word.raw, "".join(loose))

    def expand(self, word: Word, env: dict[str, list[str] | None]) -> list[str] | None:
        """The values ``word`` may take (variables the command itself sets are followed), or
        None when it depends on something the hook cannot see."""

        results = [""]
        for part in word.parts:
            tag = part[0]
            options: list[str] | None
            if tag == "lit":
                text = str(part[1])
                if not part[2] and any(c in text for c in "*?[") and text not in ("[", "[["):
                    return None  # a glob: the files decide
                if not part[2] and "{" in text and "," in text and "}" in text:
                    return None  # a brace expansion makes several words
                options = [text]
            elif tag == "var":
                name = str(part[1])
                if name in env:
                    options = env[name]
                    if options == [UNSET]:
                        options = [""]
                elif name in SAFE_ENVIRON and name in os.environ:
                    options = [os.environ[name]]
                else:
                    options = None
            elif tag == "tilde":
                options = [os.path.expanduser(str(part[1]))]
            elif tag == "sub":
                node = part[1]
                assert isinstance(node, Node)
                found = _which(node)
                options = [found] if found else None
            else:
                options = None
            if options is None:
                return None
            results = [r + o for r in results for o in options][:_MAX_VALUES]
        return results

    # -- one command -----------------------------------------------------------------------------

    def command(
        self,
        argv: list[_Arg],
        env: dict[str, list[str] | None],
        depth: int,
        *,
        stdin: str = "",
        heredoc: str | None = None,
        shebang: str = "",
    ) -> None:
        """Check one program invocation ``argv`` (``argv[0].value`` is known)."""

        if depth > _MAX_DEPTH:
            self.add("unparsable", "commands nested too deeply to be checked")
            return
        path = argv[0].value or ""
        name = os.path.basename(path)
        if name in self.settings.allowed_programs:
            return
        if name in ("python-sb", "pysandboxes"):
            self.python_sb(argv, env, shebang=shebang)
        elif python_like(name):
            self.python(argv, env, depth, stdin=stdin, shebang=shebang)
        elif name in self.settings.runners:
            self.runner(argv, shebang=shebang)
        elif name in SHELLS:
            self.shell(argv, env, depth, stdin=stdin, heredoc=heredoc)
        elif name in _WRAPPERS:
            self.wrap_env = dict(env)
            inner = _WRAPPERS[name](self, argv)
            inner_env = self.wrap_env
            if inner:
                self.inner(inner, inner_env, depth, stdin=stdin, heredoc=heredoc, shebang=shebang)
        elif name in _PATCHERS:
            self.patch(name, argv, heredoc)
        elif name == "git" and len(argv) > 1 and argv[1].value in ("apply", "am"):
            self.patch("git", argv, heredoc)
        elif name in _AGENT_CLIS:
            self.agent_cli(name, argv)
        elif name == "eval":
            self.shell_string(argv[1:], env, depth, joined=True)
        elif name == "trap" and len(argv) > 2 and not (argv[1].value or "-").startswith("-"):
            self.shell_string(argv[1:2], env, depth, joined=False)
        elif name in ("source", ".") and len(argv) > 1:
            self.sourced(argv[1])
        elif name == "alias":
            for arg in argv[1:]:
                if arg.value and "=" in arg.value:
                    self.check_text(arg.value.split("=", 1)[1], dict(env), depth + 1)
        elif name in _RUNNING_TOOLS:
            inner = _RUNNING_TOOLS[name](self, argv)
            if (
                inner
                and name in ("uv", "uvx")
                and os.path.basename(inner[0].value or "")
                in (
                    "python-sb",
                    "pysandboxes",
                )
            ):
                self.python_sb_source(argv)
            if inner:
                self.wrap_env = dict(env)
                if any((a.value or "").startswith("--env-file") for a in argv[1:]):
                    self.clear_env("--env-file")
                self.inner(
                    inner, self.wrap_env, depth, stdin=stdin, heredoc=heredoc, shebang=shebang
                )
        elif "/" in path:
            self.script(argv, env, depth, stdin=stdin, heredoc=heredoc)
        self.writes(name, argv)

    def inner(
        self,
        inner: list[_Arg],
        env: dict[str, list[str] | None],
        depth: int,
        *,
        stdin: str,
        heredoc: str | None,
        shebang: str,
    ) -> None:
        if inner[0].value is None:
            self.add(
                "dynamic",
                f"the program this command runs is computed when it runs ({inner[0].raw})",
                "write the program's name literally",
            )
            return
        saved = self.here
        self.here = self.directory(env)
        try:
            self.command(inner, env, depth + 1, stdin=stdin, heredoc=heredoc, shebang=shebang)
        finally:
            self.here = saved

    # -- what a wrapper changes for the command it runs (called by the unwrap functions) ----------

    def set_var(self, name: str, value: str | None = None) -> None:
        """The wrapper sets the variable ``name`` (to ``value``; None: a value unknown to the
        hook; :data:`UNSET`: unsets it)."""

        self.wrap_env[name] = None if value is None else [value]

    def clear_env(self, why: str) -> None:
        """The wrapper replaces the environment (``env -i``, ``sudo``...)."""

        self.wrap_env[CLEARED] = [why]

    def fs_view(self, why: str) -> None:
        """The wrapper runs the command in another file-system view (``chroot``...)."""

        self.wrap_env[FS_VIEW] = [why]
        self.wrap_env[CWD] = None

    def chdir(self, directory: str | None) -> None:
        """The wrapper starts the command in ``directory`` (None: a place the hook cannot
        know), relative to the current one."""

        here = self.directory(self.wrap_env)
        if directory is None or here is None:
            self.wrap_env[CWD] = None
        else:
            self.wrap_env[CWD] = [
                os.path.normpath(os.path.join(here, os.path.expanduser(directory)))
            ]

    def agent_cli(self, name: str, argv: list[_Arg]) -> None:
        """A coding agent started from the shell runs its own tools under its own hooks: refuse
        the options that start it without them (``claude --bare``, Codex's
        ``--dangerously-bypass-*``)."""

        for arg in argv[1:]:
            value = arg.value or ""
            if value in _AGENT_CLIS[name] or value.startswith(_AGENT_CLIS[name]):
                self.add(
                    "hook-config",
                    f"`{value}` starts {name} without the hooks that check its commands",
                    f"{name} without {value}",
                )
                return

    def patch(self, name: str, argv: list[_Arg], heredoc: str | None) -> None:
        """``apply_patch`` (Codex's patch command, typed into a shell), ``patch`` and ``git
        apply``/``git am``: the files a patch changes are read from the patch itself (a
        heredoc, an argument, a file it names or reads on its standard input); a patch the hook
        cannot read is refused, since it may change a rule file."""

        values = [a.value for a in argv[1:]]
        texts: list[str | None] = []
        targets: list[str] = []
        if name in ("apply_patch", "applypatch"):
            texts = [v for v in values if v is not None and "*** " in v] or [heredoc]
            if heredoc is None and not any(v and "*** " in v for v in values):
                texts = [self.read_patch(self.stdin_file)]
        elif name == "patch":
            source: str | None = self.stdin_file
            positional = []
            i = 0
            while i < len(values):
                value = values[i]
                if value is None:
                    texts.append(None)
                elif value in ("-i", "--input") and i + 1 < len(values):
                    source = values[i + 1]
                    i += 1
                elif value.startswith("--input="):
                    source = value.split("=", 1)[1]
                elif value.startswith("-i") and len(value) > 2:
                    source = value[2:]
                elif value in (
                    "-o",
                    "--output",
                    "-B",
                    "--prefix",
                    "-d",
                    "--directory",
                    "-p",
                    "-r",
                    "--reject-file",
                    "-z",
                    "--suffix",
                    "-V",
                    "-D",
                    "-F",
                ):
                    if value in ("-o", "--output") and i + 1 < len(values):
                        targets.append(values[i + 1] or "")
                    if value in ("-d", "--directory"):
                        texts.append(None)  # another directory: the hook cannot follow it
                    i += 1
                elif not value.startswith("-"):
                    positional.append(value)
                i += 1
            if positional:
                targets.append(positional[0])
                if len(positional) > 1:
                    source = positional[1]
            if any(v in ("--dry-run", "-C", "--check") for v in values):
                return
            texts.append(heredoc if heredoc is not None else self.read_patch(source))
        else:  # git apply / git am
            files = [v for v in values[1:] if v is not None and not v.startswith("-")]
            if any(v in ("--check", "--stat", "--numstat", "--summary") for v in values):
                return
            if any(v is None for v in values):
                texts.append(None)
            for file in files:
                texts.append(self.read_patch(file))
            if not files:
                texts.append(heredoc if heredoc is not None else self.read_patch(self.stdin_file))
        for text in texts:
            if text is None:
                self.add(
                    "unreadable",
                    f"the hook cannot read the patch `{_join(argv)}` applies, so it cannot tell "
                    "whether it changes a rule file",
                    "edit the files with the agent's own edit tool, or give the patch in a heredoc",
                )
                return
            targets.extend(_patch_targets(text))
        for target in targets:
            if is_protected(target):
                self.rule_write(target)
                return

    def read_patch(self, path: str | None) -> str | None:
        """The text of a patch file (the first 1 MB), or None when it cannot be read."""

        if not path or path == "-":
            return None
        full = os.path.join(self.here or self.cwd, os.path.expanduser(path))
        try:
            with open(full, encoding="utf-8", errors="replace") as handle:
                return handle.read(1 << 20)
        except OSError:
            return None

    def writes(self, name: str, argv: list[_Arg]) -> None:
        """Commands that change a rule file (``rm``, ``mv``, ``cp x .py-sandboxes``, ``sed -i``,
        ``git rm``...)."""

        # a glob or an unknown part is matched against the files there, as bash would expand it
        values = [a.value if a.value is not None else a.loose for a in argv[1:]]
        targets: list[str] = []
        if name in _WRITERS_ANY:
            targets = values
        elif name in _WRITERS_LAST and values:
            targets = values[-1:]
            last = os.path.join(self.here or self.cwd, os.path.expanduser(values[-1]))
            into_directory = values[-1].endswith("/") or os.path.isdir(last)
            directory = values[-1]
            for i, value in enumerate(values[:-1]):
                if i > 0 and values[i - 1] in ("-t", "--target-directory"):
                    directory, into_directory = value, True
                elif value.startswith("--target-directory="):
                    directory, into_directory = value.split("=", 1)[1], True
            for value in values[:-1]:
                if not is_protected(value) or value.startswith("-"):
                    continue
                if name == "ln":
                    targets.append(value)  # a second name to write the rule file through
                elif into_directory and self.writes_rules_in(directory, value):
                    targets.append(os.path.join(directory, os.path.basename(value)))
        elif (
            (name in ("sed", "perl", "ruby") and any(_in_place(v) for v in values))
            or (
                name in ("awk", "gawk")
                and any(
                    v in ("-iinplace", "--include=inplace") or v.startswith("-iinplace")
                    for v in values
                )
            )
            or (name in ("awk", "gawk") and "inplace" in values)
            or (name in ("curl", "wget") and values)
            or (name == "sudo" and any(v in ("-e", "--edit") for v in values))
        ):
            targets = values
        elif name == "dd":
            targets = [v[3:] for v in values if v.startswith("of=")]
        elif name == "git" and values and values[0] in ("rm", "mv", "checkout", "restore"):
            targets = values[1:]
        elif name == "find" and "-delete" in values:
            targets = [v for v in values if "py-sandboxes" in v]
        if name == "rsync" and any(v.startswith("--del") for v in values):
            targets = values[-1:]
        recursive = name in ("rm", "git", "mv", "rsync") and any(
            (v.startswith("-") and not v.startswith("--") and ("r" in v or "R" in v))
            or v == "--recursive"
            for v in values
        )
        if name == "mv" or (name == "rsync" and any(v.startswith("--del") for v in values)):
            recursive = True  # moving a directory moves the rule files in it; --delete removes
        for target in targets:
            if target.startswith("-"):
                continue
            found = self.rule_files_in(target, recursive=recursive)
            if found:
                self.rule_write(found)
                return

    def writes_rules_in(self, directory: str, source: str) -> bool:
        """A copy of the rule file ``source`` into ``directory`` changes rules: it replaces one
        there, or lands in the project (a backup elsewhere, ``cp .py-sandboxes /tmp/``,
        passes)."""

        here = self.here or self.cwd
        full = os.path.realpath(os.path.join(here, os.path.expanduser(directory)))
        if os.path.exists(os.path.join(full, os.path.basename(source))):
            return True
        return full == os.path.realpath(here) or full.startswith(os.path.realpath(here) + os.sep)

    def rule_files_in(self, target: str, *, recursive: bool) -> str:
        """The rule file ``target`` names (or one its glob matches, or, for ``rm -r``, one
        under the directory it names); empty if none."""

        if is_protected(target) or "py-sandboxes" in os.path.basename(target):
            return target
        here = self.here or self.cwd
        try:
            real = os.path.realpath(os.path.join(here, os.path.expanduser(target)))
        except (OSError, ValueError):
            real = ""
        if real and is_protected(real):
            return target  # a symbolic link to a rule file
        paths = [target]
        if any(c in target for c in "*?[$"):
            import glob

            pattern = target.replace("$UNKNOWN", "*")
            paths = glob.glob(os.path.expanduser(pattern), root_dir=here)[:1000]
            if any(is_rule_file(p) for p in paths):
                return next(p for p in paths if is_rule_file(p))
        if recursive:
            for path in paths:
                full = os.path.join(here, os.path.expanduser(path))
                found = _rule_file_under(full)
                if found:
                    return found
        return ""

    # -- python and python-sb --------------------------------------------------------------------

    def python(
        self,
        argv: list[_Arg],
        env: dict[str, list[str] | None],
        depth: int,
        *,
        stdin: str,
        shebang: str,
    ) -> None:
        self.python_env = env  # for `python -m pysandboxes`
        options: list[_Arg] = []
        i = 1
        while i < len(argv):
            value = argv[i].value
            if value is None:
                break
            if value in ("-V", "--version", "-VV", "-h", "--help", "-?") or value.startswith(
                "--help"
            ):
                return  # prints and exits: no program runs
            if value == "--":
                i += 1
                break
            if value == "-" or not value.startswith("-"):
                break
            if value.startswith("--"):
                options.append(argv[i])
                i += 2 if value == "--check-hash-based-pycs" else 1
                continue
            # a group of one-letter options, maybe ending with one that takes a value
            for j, letter in enumerate(value[1:], start=1):
                if letter in "cm":
                    glued = value[j + 1 :]
                    if letter == "m":
                        module = glued or (argv[i + 1].value if i + 1 < len(argv) else "")
                        after = i + 1 if glued else i + 2
                        self.python_module(argv, options, module, after, shebang=shebang)
                        return
                    self.refuse_python(argv, shebang=shebang, what="code given with -c")
                    return
                if letter in "WX":
                    i += 0 if value[j + 1 :] else 1
                    break
                if letter == "V":
                    return
            options.append(argv[i])
            i += 1
        if i >= len(argv) or argv[i].value == "-":
            what = "code read from its standard input" if stdin else "an interactive session"
            self.refuse_python(argv, shebang=shebang, what=what)
            return
        self.refuse_python(argv, shebang=shebang, what="a program")

    def python_module(
        self,
        argv: list[_Arg],
        options: list[_Arg],
        module: str | None,
        after: int,
        *,
        shebang: str,
    ) -> None:
        if module == "pysandboxes":
            self.python_sb([argv[0], *argv[after:]], self.python_env, shebang=shebang)
            return
        if module and module.split(".")[0] in self.settings.allowed_modules:
            return
        self.refuse_python(argv, shebang=shebang, what=f"the module {module or '?'}")

    def refuse_python(self, argv: list[_Arg], *, shebang: str, what: str) -> None:
        interpreter = os.path.basename(argv[0].value or "python")
        if shebang:
            self.add(
                "shebang",
                f"the script {shebang} starts with a shebang that runs a bare {interpreter}: "
                "run directly, it would run without its rules",
                f"python-sb {quote(shebang)}"
                + (" " + _join(argv[2:]) if len(argv) > 2 else "")
                + "  (and change its first line to #!/usr/bin/env -S python-sb)",
            )
            return
        rest = argv[1:]
        self.add(
            "python",
            f"`{_join(argv)}` runs {what} with a bare {interpreter}, outside the rules of its "
            ".py-sandboxes",
            "python-sb " + _join(rest) if rest else "python-sb",
        )

    def runner(self, argv: list[_Arg], *, shebang: str) -> None:
        name = os.path.basename(argv[0].value or "")
        module = "pytest" if name == "py.test" else name
        self.add(
            "runner",
            f"`{_join(argv)}` runs the project's Python code through {name} without its rules",
            f"python-sb -m {module} " + _join(argv[1:])
            if len(argv) > 1
            else f"python-sb -m {module}",
        )

    def python_sb(
        self, argv: list[_Arg], env: dict[str, list[str] | None], *, shebang: str = ""
    ) -> None:
        """``python-sb ...``: read the command line with the launcher's own parser
        (:mod:`pysandboxes.launch.argv`) and find the rule file as the launcher does
        (:mod:`pysandboxes.policy.locate`); refuse what widens or replaces the rules."""

        from pysandboxes.launch.argv import UsageError, parse, subcommand_of, widening

        words: list[str] = []
        for arg in argv[1:]:
            if arg.value is None:
                break
            words.append(arg.value)
        known = len(words) + 1 == len(argv)
        sub = subcommand_of(words)
        if sub is not None:
            if sub in ("--install-hook", "--uninstall-hook"):
                self.add(
                    "hook-config",
                    f"`{_join(argv)}` changes the coding-agent hook that checks this agent's "
                    "commands",
                    "leave the hook as the user installed it",
                )
            return  # --review, --check, --hook: run no program
        try:
            cmd = parse(words)
        except UsageError:
            if known:
                return  # python-sb refuses this command line itself and runs nothing
            cmd = None
        if cmd is None or (not known and cmd.kind == "repl" and cmd.action == "run"):
            # an unknown word where an option or the program stands
            self.add(
                "dynamic",
                "a python-sb option or program is computed when the command runs ("
                + _join(argv[len(words) + 1 :])
                + "): the hook cannot tell which rules apply",
                "write python-sb's options and the program literally",
            )
            return
        if cmd.action != "run":
            return  # --explain, --help, --version: run nothing
        script = cmd.program if cmd.kind == "script" else None
        base = "python-sb" + (f" {quote(script)}" if script else "")
        for option in widening(cmd):
            if option == "--learn" or option.startswith(("--learn=", "--audit")):
                message = (
                    f"`{option}` makes python-sb allow and record every access instead of "
                    "refusing what the rules do not grant"
                )
            else:
                message = (
                    f"`{option}` adds a rule on the command line, over what the rule file grants"
                )
            self.add("sb-option", message, f"{base} (without {option})")
        if cmd.config is not None and not self.config_allowed(cmd.config, script):
            self.add(
                "sb-config",
                f"`--pysandboxes-config={cmd.config}` replaces the rule file that python-sb "
                "would use" + (" for this script" if script else ""),
                f"{base} (without --pysandboxes-config; the .py-sandboxes next to the script "
                "applies)",
            )
        if FS_VIEW in env:
            self.add(
                "unreadable",
                f"python-sb runs here in another file-system view ({_first(env[FS_VIEW])}): the "
                "hook cannot read the rule file it would use",
                f"{base} (without the wrapper that changes the root or the mount namespace)",
            )
            return
        self.launcher_environment(env, base)
        here = self.here
        relative = cmd.config is None and script is not None and not os.path.isabs(script)
        if here is None and (relative or cmd.config is not None or cmd.kind != "script"):
            self.add(
                "unreadable",
                "the hook cannot tell which directory python-sb starts in ("
                + (self.unknown_directory or "a `cd` it cannot follow")
                + "), so it cannot find the rule file",
                "cd to a literal absolute directory first, or give the script's absolute path",
            )
            return
        from pysandboxes.policy.locate import find_rule_file

        start = here or self.cwd
        target = cmd.target
        if cmd.kind == "script" and target:
            target = os.path.expanduser(target)
        rule_file = find_rule_file(cmd.config, cmd.kind, target, start)
        if not os.path.isfile(rule_file):
            where = f"next to {script} nor " if script else ""
            self.add(
                "sb-learning",
                f"no .py-sandboxes {where}in the current directory: python-sb would run in "
                "learning mode, which allows everything and records it",
                "ask the user for the rule file of this program; do not create one yourself",
            )
            return
        self.rule_variables(env, rule_file, base)

    def launcher_environment(self, env: dict[str, list[str] | None], base: str) -> None:
        """Variables that load code into python-sb's own interpreter (a sitecustomize.py, a
        preloaded library) before any rule applies."""

        for variable in sorted(_set_names(env)):
            if variable in LAUNCHER_VARIABLES or (
                variable.startswith("PYTHON") and variable not in HARMLESS_PYTHON_VARIABLES
            ):
                self.add(
                    "sb-environment",
                    f"{variable} is set for python-sb: it acts on python-sb's own interpreter "
                    "(code from a sitecustomize.py, a preloaded library) before any rule applies",
                    f"{base} (without setting {variable}; the rule file's env= lines give the "
                    "program its variables)",
                )

    def rule_variables(self, env: dict[str, list[str] | None], rule_file: str, base: str) -> None:
        """Refuse a command that sets (or unsets, or clears) a variable the rule file in effect
        reads: ``OS_SANDBOX=none`` under ``os-sandbox=${OS_SANDBOX:-landlock}`` is the
        downgrade path (the record is ``--explain``'s, ``policy.loader.variables_read``)."""

        names = _set_names(env)
        cleared = CLEARED in env
        if not names and not cleared:
            return
        from pysandboxes.policy.loader import variables_read

        read = variables_read(rule_file, cwd=self.here or self.cwd)
        if not read:
            return
        shown = _display(rule_file, self.cwd)

        def is_set_here(variable: str) -> bool:
            """Set in the environment the command starts with (the hook's own, which the agent
            gives its shell): clearing or unsetting it changes what the rules read."""

            if "*" in variable:
                return any(v and _glob_match(variable, n) for n, v in os.environ.items())
            return bool(os.environ.get(variable))

        set_here = [name for name in sorted(read) if is_set_here(name)]
        if cleared and set_here:
            name, origin = set_here[0], read[set_here[0]]
            self.add(
                "sb-variable",
                f"python-sb runs with an environment replaced by {_first(env[CLEARED])}, and "
                f"the rule file {shown} reads {', '.join(set_here)}, set here ({name} at "
                f"{origin}): its rules would change",
                f"{base} (in the environment as it is)",
            )
            return
        for name in sorted(names):
            if env.get(name) == [UNSET] and not is_set_here(name):
                continue  # unsetting what is not set changes nothing
            found = read.get(name) or next(
                (o for pattern, o in read.items() if "*" in pattern and _glob_match(pattern, name)),
                None,
            )
            if found is None:
                continue
            self.add(
                "sb-variable",
                f"this command sets {name}, which the rule file {shown} reads ({found}): "
                "changing it changes the rules python-sb applies",
                f"{base} (without setting {name}; only the user changes the rules)",
            )

    def python_sb_source(self, argv: list[_Arg]) -> None:
        """``uvx --from SOURCE python-sb``: python-sb from a URL or a path is another program."""

        for i, arg in enumerate(argv[1:], start=1):
            value = arg.value or ""
            if value == "--from" and i + 1 < len(argv):
                source = argv[i + 1].value
            elif value.startswith("--from="):
                source = value.split("=", 1)[1]
            else:
                continue
            if source is None or not _is_requirement(source):
                self.add(
                    "sb-source",
                    f"`--from {source or argv[i + 1].raw}` takes python-sb from somewhere else "
                    "than the package index: that program need not enforce anything",
                    "uvx --from pysandboxes python-sb ...",
                )

    def config_allowed(self, config: str, script: str | None) -> bool:
        if not config:
            return False
        here = self.here or self.cwd
        wanted = os.path.realpath(os.path.join(here, os.path.expanduser(config)))
        for allowed in self.settings.allowed_configs:
            if os.path.realpath(os.path.join(self.cwd, os.path.expanduser(allowed))) == wanted:
                return True
        if script and script != "-":
            own = os.path.join(os.path.dirname(os.path.join(here, script)), ".py-sandboxes")
            return os.path.realpath(own) == wanted
        return False

    # -- shells and scripts ----------------------------------------------------------------------

    def shell(
        self,
        argv: list[_Arg],
        env: dict[str, list[str] | None],
        depth: int,
        *,
        stdin: str,
        heredoc: str | None,
    ) -> None:
        name = os.path.basename(argv[0].value or "")
        i = 1
        if name == "busybox":
            if len(argv) < 2 or argv[1].value not in ("sh", "ash", "bash"):
                return
            i = 2
        command_mode = False
        reads_stdin = False
        while i < len(argv):
            value = argv[i].value
            if value is None:
                if command_mode:
                    break
                self.dynamic(argv[i].raw)
                return
            if value == "--" or value == "-":
                i += 1
                break
            if value.startswith("--"):
                i += 2 if value in ("--rcfile", "--init-file") else 1
                continue
            if value[:1] in ("-", "+") and len(value) > 1:
                letters = value[1:]
                if "c" in letters:
                    command_mode = True
                if "s" in letters:
                    reads_stdin = True
                i += 2 if letters[-1:] in ("o", "O") else 1
                continue
            break
        if command_mode:
            if i >= len(argv):
                self.add("unparsable", f"`{_join(argv)}` has no command string")
                return
            self.shell_string(argv[i : i + 1], env, depth, joined=False)
            return
        if i < len(argv) and not reads_stdin:
            if argv[i].raw.startswith(("<(", "$(", "`")) or argv[i].value in _STDIN_PATHS:
                self.sourced(argv[i])
                if argv[i].value not in _STDIN_PATHS:
                    return
            else:
                return  # a shell script file: out of the hook's sight (see docs/agents.md)
        if heredoc is not None:
            self.check_text(heredoc, dict(env), depth + 1)
        elif stdin in ("pipe", "file"):
            self.add(
                "unparsable",
                f"`{_join(argv)}` runs the commands it reads from its standard input, which "
                "the hook cannot see",
                "run the commands themselves, or put them in `bash -c '...'`",
            )

    def sourced(self, arg: _Arg) -> None:
        """``source FILE``: a shell file is out of sight, but commands produced on the spot
        (``source <(...)``, ``/dev/stdin``) are refused as unreadable."""

        if arg.raw.startswith(("<(", "$(", "`")) or arg.value in _STDIN_PATHS:
            self.add(
                "unparsable",
                f"`source {arg.raw}` runs commands that are produced when it runs: the hook "
                "cannot see them",
                "run the commands themselves",
            )

    def shell_string(
        self, args: list[_Arg], env: dict[str, list[str] | None], depth: int, *, joined: bool
    ) -> None:
        if any(a.value is None for a in args):
            # Check what can be seen (unknown parts kept as written), then refuse the rest.
            loose = " ".join(a.loose for a in args)
            self.check_text(loose, dict(env), depth + 1)
            self.add(
                "dynamic",
                "a command string is computed when it runs ("
                + " ".join(a.raw for a in args)
                + "): the hook cannot see what it runs",
                "write the command string literally",
            )
            return
        text = " ".join(a.value or "" for a in args) if joined else (args[0].value or "")
        # eval runs in the current shell: what it sets stays set
        self.check_text(text, env if joined else dict(env), depth + 1)

    def script(
        self,
        argv: list[_Arg],
        env: dict[str, list[str] | None],
        depth: int,
        *,
        stdin: str,
        heredoc: str | None,
    ) -> None:
        """A program run by its path: read its shebang (what the kernel would run)."""

        path = argv[0].value or ""
        if self.here is None and not os.path.isabs(os.path.expanduser(path)):
            why = self.unknown_directory or "after a `cd` it cannot follow"
            self.add(
                "unreadable",
                f"the hook cannot tell which file {path} is ({why})",
                "use the script's absolute path, or cd to a literal absolute directory first",
            )
            return
        full = os.path.join(self.here or self.cwd, os.path.expanduser(path))
        real = os.path.basename(os.path.realpath(full))
        if python_like(real) or real in ("python-sb",):
            # a link (or a venv's bin/python) to an interpreter: judged as that interpreter
            self.command([_Arg(real, argv[0].raw), *argv[1:]], env, depth + 1, stdin=stdin)
            return
        try:
            with open(full, "rb") as handle:
                head = handle.read(256)
        except OSError as exc:
            if path.endswith(".py") or not os.path.exists(full):
                self.add(
                    "unreadable",
                    f"the hook cannot read the first line of {path} ({exc.strerror}), so it "
                    "cannot tell which interpreter would run it",
                    f"python-sb {quote(path)}" if path.endswith(".py") else "",
                )
            return
        if not head.startswith(b"#!"):
            return  # a binary, or a file the shell runs as a shell script
        line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
        interpreter, _, arg = line.partition(" ")
        arg = arg.strip()
        if not interpreter:
            return
        words = [_Arg(interpreter, interpreter)]
        if arg:
            words.append(_Arg(arg, arg))
        words.append(_Arg(path, path))
        words.extend(argv[1:])
        self.command(words, env, depth + 1, stdin=stdin, heredoc=heredoc, shebang=path)


def _rule_file_under(directory: str, budget: int = 5000) -> str:
    """A rule file somewhere under ``directory`` (a bounded walk; symbolic links not followed)."""

    if not os.path.isdir(directory) or os.path.islink(directory):
        return ""
    for root, dirs, files in os.walk(directory):
        for name in files:
            if is_protected(os.path.join(root, name)):
                return os.path.join(root, name)
        budget -= len(files) + len(dirs)
        if budget <= 0:
            return ""
    return ""


def _is_requirement(text: str) -> bool:
    """A requirement from the package index (``pysandboxes``, ``pysandboxes==0.8``), not a URL
    or a path."""

    return (
        bool(text)
        and not text.startswith((".", "/", "~"))
        and "/" not in text
        and ":" not in text
        and "@" not in text
    )


_ASSIGN_OPS = ("<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "++", "--")


def _arith_assigned(text: str) -> list[str]:
    """The variables an arithmetic expression (``let`` words, ``$((...))``, ``((...))``)
    assigns: a name followed by ``=`` (not ``==``), a compound assignment or ``++``/``--``,
    or preceded by ``++``/``--``."""

    found = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            name = text[i:j]
            k = j
            while k < n and text[k] in " \t":
                k += 1
            after = text[k : k + 3]
            before = text[max(0, i - 2) : i]
            if (
                (after[:1] == "=" and after[1:2] != "=")
                or after.startswith(_ASSIGN_OPS)
                or before in ("++", "--")
            ):
                found.append(name)
            i = j
        else:
            i += 1
    return found


def _set_names(env: dict[str, list[str] | None]) -> set[str]:
    """The variables a scope sets (the markers ``CWD``, ``CLEARED``... are not variables)."""

    return {name for name in env if not name.startswith("\0")}


def _first(values: list[str] | None) -> str:
    return values[0] if values else "?"


def _glob_match(pattern: str, name: str) -> bool:
    """``PAT_*`` (the ``*`` of an ``env=`` pattern) matches ``name``."""

    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


def _display(path: str, cwd: str) -> str:
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative


def _is_plain_name(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_")


def _which(node: Node) -> str | None:
    """``$(which X)``, ``$(command -v X)``, ``$(type -P X)``: the program ``X`` (a path or
    name), which is what the substitution yields for the hook's purpose."""

    if node.kind != "list" or len(node.children) != 1:
        return None
    simple = node.children[0]
    if simple.kind != "simple" or not simple.words:
        return None
    words = [w.literal() for w in simple.words]
    if any(w is None for w in words):
        return None
    texts = [w or "" for w in words]
    if texts[0] in ("which", "whence") and len(texts) == 2:
        return texts[1]
    if texts[:2] == ["command", "-v"] and len(texts) == 3:
        return texts[2]
    if texts[0] == "type" and len(texts) == 3 and texts[1] in ("-p", "-P"):
        return texts[2]
    return None


# -- wrappers: each returns the wrapped command's argv, or [] ------------------------------------


def _skip(argv: list[_Arg], start: int, with_value: frozenset[str], flags_only: bool) -> int:
    """The index of the first word after the options of a wrapper (``--`` ends them);
    ``with_value`` lists the options that take the next word (``-u``, ``--user``; a long one
    may use ``=``, a short one may be glued, ``-uroot``, or end a group, ``-Eu root``)."""

    i = start
    while i < len(argv):
        value = argv[i].value
        if value is None:
            return i
        if value == "--":
            return i + 1
        if not value.startswith("-") or value == "-":
            return i
        if value in with_value:  # also a long option with one dash (mpirun -np 2)
            i += 2
            continue
        if value.startswith("--"):
            i += 1
            continue
        step = 1
        for j, letter in enumerate(value[1:], start=1):
            if "-" + letter in with_value:
                if j == len(value) - 1:
                    step = 2  # the value is the next word
                break  # the rest of the word is the value
        i += step
    return i


def _options(
    short: str = "", long: tuple[str, ...] = (), positional: int = 0
) -> tuple[frozenset[str], int]:
    return frozenset({f"-{c}" for c in short} | set(long)), positional


def _value_of(argv: list[_Arg], end: int, names: tuple[str, ...]) -> tuple[bool, str | None]:
    """Whether one of the options ``names`` (``-u``, ``--user``) is among ``argv[1:end]``, and
    its value (None when unknown)."""

    for i in range(1, min(end, len(argv))):
        value = argv[i].value or ""
        for name in names:
            if value == name:
                return True, argv[i + 1].value if i + 1 < len(argv) else None
            if name.startswith("--") and value.startswith(name + "="):
                return True, value.split("=", 1)[1]
            if not name.startswith("--") and value.startswith(name) and len(value) > 2:
                return True, value[2:]
    return False, None


def _has(argv: list[_Arg], end: int, *names: str) -> bool:
    """One of the flags ``names`` is among ``argv[1:end]`` (a short one also inside a group)."""

    for arg in argv[1:end]:
        value = arg.value or ""
        if value in names:
            return True
        if (
            value.startswith("-")
            and not value.startswith("--")
            and any(n[1:] in value[1:] for n in names if len(n) == 2 and n[0] == "-")
        ):
            return True
    return False


def _generic(
    short: str = "",
    long: tuple[str, ...] = (),
    positional: int = 0,
    *,
    identity: bool = False,
    no_command: tuple[str, ...] = (),
) -> Unwrap:
    """A wrapper that runs the rest of its words as a command after its options (``short``
    letters and ``long`` options take a value) and ``positional`` words (``timeout 5``).
    ``identity``: it runs the command as another user with the environment reset (``sudo``),
    so every variable the rules read may change. ``no_command``: options after which it runs
    no command (``-p PID`` of ``taskset``)."""

    with_value, _ = _options(short, long)

    def unwrap(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
        i = _skip(argv, 1, with_value, False)
        if no_command and _has(argv, i, *no_command):
            return []
        if identity:
            checker.clear_env(argv[0].raw)
        return argv[i + positional :]

    return unwrap


def _env(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``env [-i] [-u NAME] [-C DIR] [NAME=VALUE]... [-S STRING] COMMAND``."""

    i = 1
    while i < len(argv):
        value = argv[i].value
        if value is None:
            return argv[i:]
        if value in ("-S", "--split-string") or value.startswith(("-S", "--split-string=")):
            if value in ("-S", "--split-string"):
                text = argv[i + 1].value if i + 1 < len(argv) else ""
                i += 2
            else:
                text = value.split("=", 1)[1] if value.startswith("--") else value[2:]
                i += 1
            if text is None:
                return [_Arg(None, argv[i - 1].raw)]
            # the words -S makes are read as env's own again (NAME=VALUE, -i...)
            return _env(checker, [argv[0], *(_Arg(w, w) for w in _split(text)), *argv[i:]])
        if value == "--":
            i += 1
            break
        if value in ("-i", "-", "--ignore-environment") or (
            value[:1] == "-" and value[1:2] != "-" and "i" in value[1:] and "=" not in value
        ):
            checker.clear_env("env -i")
            i += 1
        elif value in ("-u", "--unset", "-C", "--chdir"):
            target = argv[i + 1].value if i + 1 < len(argv) else None
            if value in ("-u", "--unset"):
                checker.set_var(target or "?", UNSET)
            else:
                checker.chdir(target)
            i += 2
        elif value.startswith(("--unset=", "--chdir=")) or (
            value[:2] in ("-u", "-C") and len(value) > 2
        ):
            target = value.split("=", 1)[1] if value.startswith("--") else value[2:]
            if value.startswith(("--unset", "-u")):
                checker.set_var(target, UNSET)
            else:
                checker.chdir(target)
            i += 1
        elif "=" in value and _is_plain_name(value.split("=", 1)[0]):
            name, _, text = value.partition("=")
            checker.set_var(name, text)
            i += 1
        elif value.startswith("-"):
            i += 1
        else:
            break
    return argv[i:]


def _split(text: str) -> list[str]:
    """``env -S``'s own splitting: blanks separate, quotes and backslashes group."""

    words: list[str] = []
    buf: list[str] = []
    quote = ""
    started = False
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < len(text):
                i += 1
                buf.append(text[i])
            else:
                buf.append(c)
        elif c in " \t":
            if started:
                words.append("".join(buf))
                buf, started = [], False
        elif c in "'\"":
            quote, started = c, True
        elif c == "\\" and i + 1 < len(text):
            i += 1
            buf.append(text[i])
            started = True
        else:
            buf.append(c)
            started = True
        i += 1
    if started:
        words.append("".join(buf))
    return words


def _fixed(with_value: frozenset[str], positional: int = 0) -> Unwrap:
    """A wrapper with options (``with_value`` take a value) and ``positional`` words before
    the command (``timeout DURATION``)."""

    def unwrap(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
        i = _skip(argv, 1, with_value, False)
        return argv[i + positional :]

    return unwrap


def _exec(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    i = _skip(argv, 1, frozenset({"-a"}), False)
    if _has(argv, i, "-c"):
        checker.clear_env("exec -c")
    return argv[i:]


def _command_builtin(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    values = [a.value for a in argv[1:]]
    if any(v in ("-v", "-V") for v in values):
        return []  # a look-up, runs nothing
    return argv[_skip(argv, 1, frozenset(), True) :]


_SUDO_VALUE = _options(
    "ugCDprtUThRh",
    ("--user", "--group", "--close-from", "--chdir", "--prompt", "--role", "--type",
     "--other-user", "--command-timeout", "--chroot", "--host"),
)[0]  # fmt: skip


def _sudo(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``sudo [options] [NAME=VALUE]... COMMAND``: the command runs as another user, in an
    environment sudo resets (unless ``-E``); ``-e`` edits files (see ``writes``); ``-l``,
    ``-v``, ``-k`` run nothing."""

    i = _skip(argv, 1, _SUDO_VALUE, False)
    if _has(argv, i, "-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K", "-V"):
        return []
    if not _has(argv, i, "-E", "--preserve-env"):
        checker.clear_env("sudo")
    found, directory = _value_of(argv, i, ("-D", "--chdir"))
    if found:
        checker.chdir(directory)
    found, root = _value_of(argv, i, ("-R", "--chroot"))
    if found:
        checker.fs_view(f"sudo --chroot {root}")
    while (
        i < len(argv)
        and "=" in (argv[i].value or "")
        and _is_plain_name((argv[i].value or "").split("=")[0])
    ):
        name, _, text = (argv[i].value or "").partition("=")
        checker.set_var(name, text)
        i += 1
    return argv[i:]


def _su(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``su [options] [-] [USER [ARGS]]`` and ``runuser`` (also ``runuser -u USER -- CMD``):
    ``-c CMD`` runs CMD with the user's shell (``-s SHELL``); the environment becomes the
    user's."""

    checker.clear_env(argv[0].raw)
    with_value = frozenset(
        {"-c", "--command", "--session-command", "-s", "--shell", "-g", "--group", "-G",
         "--supp-group", "-w", "--whitelist-environment", "-u", "--user"}
    )  # fmt: skip
    shell = "sh"
    found, value = _value_of(argv, len(argv), ("-s", "--shell"))
    if found:
        shell = value or "?"
    found_u, _user = _value_of(argv, len(argv), ("-u", "--user"))
    command: _Arg | None = None
    i = 1
    while i < len(argv):
        value = argv[i].value or ""
        if value in ("-c", "--command", "--session-command") and i + 1 < len(argv):
            command = argv[i + 1]
            i += 2
            continue
        if value.startswith(("--command=", "--session-command=")):
            text = value.split("=", 1)[1]
            command = _Arg(text, text)
        elif value.startswith("-") and not value.startswith("--") and value.endswith("c"):
            if i + 1 < len(argv):  # a group ending in c: -lc CMD
                command = argv[i + 1]
                i += 2
                continue
        elif value == "--" and found_u and argv[0].value != "su":
            return argv[i + 1 :]  # runuser -u USER -- CMD ARGS
        elif value in with_value:
            i += 1
        i += 1
    if found_u and argv[0].value != "su" and command is None:
        j = _skip(argv, 1, with_value, False)
        return argv[j:]
    if command is not None:
        return [_Arg(shell, shell), _Arg("-c", "-c"), command]
    return [_Arg(shell, shell)] if found else []


def _setpriv(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``setpriv [options] COMMAND``: options are long ones with values (``--reuid=1000`` or
    ``--reuid 1000``) and flags (``--nnp``, ``--init-groups``, ``--reset-env``)."""

    with_value = frozenset(
        {"--ruid", "--euid", "--reuid", "--rgid", "--egid", "--regid", "--groups",
         "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig",
         "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule",
         "--seccomp-filter"}
    )  # fmt: skip
    i = _skip(argv, 1, with_value, False)
    if _has(argv, i, "--reset-env"):
        checker.clear_env("setpriv --reset-env")
    if _has(argv, i, "-d", "--dump"):
        return []
    return argv[i:]


def _unshare(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``unshare [options] [COMMAND]`` (no command: the user's shell)."""

    with_value = frozenset(
        {"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--propagation",
         "--map-user", "--map-group", "--map-users", "--map-groups"}
    )  # fmt: skip
    i = _skip(argv, 1, with_value, False)
    found, root = _value_of(argv, i, ("-R", "--root"))
    if found:
        checker.fs_view(f"unshare --root {root}")
    found, directory = _value_of(argv, i, ("-w", "--wd"))
    if found:
        checker.chdir(directory)
    return argv[i:] or [_Arg("sh", "sh")]


def _nsenter(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``nsenter [options] [COMMAND]``: with the mount namespace (``-m``) or a root (``-r``)
    of another process, the files are another view."""

    with_value = frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-N",
                            "--net-socket"})  # fmt: skip
    i = _skip(argv, 1, with_value, False)
    for arg in argv[1:i]:
        value = arg.value or ""
        if value.startswith(("--mount", "--root", "--wd", "-a", "--all")) or (
            value[:1] == "-" and value[1:2] != "-" and any(c in value[1:] for c in "mrwa")
        ):
            checker.fs_view(f"nsenter {value}")
            break
    return argv[i:] or [_Arg("sh", "sh")]


def _chroot(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``chroot [--userspec=U:G] [--groups=G] [--skip-chdir] NEWROOT [COMMAND]``."""

    i = _skip(argv, 1, frozenset({"--userspec", "--groups"}), False)
    root = argv[i].value if i < len(argv) else None
    checker.fs_view(f"chroot {root or '?'}")
    return argv[i + 1 :] or [_Arg("sh", "sh")]


def _systemd_run(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``systemd-run [options] COMMAND``: ``-E NAME=VALUE`` sets a variable, the command runs in
    ``/`` (``-d``/``--same-dir`` keeps the directory) with a new environment."""

    with_value = frozenset(
        {"-u", "--unit", "-p", "--property", "-E", "--setenv", "--uid", "--gid", "--nice",
         "--working-directory", "--description", "--slice", "-M", "--machine", "-H", "--host",
         "--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive",
         "--on-calendar", "--on-clock-change", "--on-timezone-change", "--path-property",
         "--socket-property", "--timer-property", "--service-type", "--send-sighup",
         "--expand-environment", "-C", "--capsule"}
    )  # fmt: skip
    i = _skip(argv, 1, with_value, False)
    checker.clear_env("systemd-run")
    for j in range(1, i):
        value = argv[j].value or ""
        if value in ("-E", "--setenv") and j + 1 < len(argv):
            checker.set_var((argv[j + 1].value or "?").split("=", 1)[0])
        elif value.startswith(("--setenv=", "-E")) and value not in ("-E",):
            text = value.split("=", 1)[1] if value.startswith("--") else value[2:]
            checker.set_var(text.split("=", 1)[0])
    found, directory = _value_of(argv, i, ("--working-directory",))
    if found:
        checker.chdir(directory)
    elif not _has(argv, i, "-d", "--same-dir"):
        checker.chdir("/")
    return argv[i:]


def _busybox(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``busybox APPLET ARGS``: the applet is the command (``busybox sh -c``, ``busybox env``,
    ``busybox timeout``...)."""

    return argv[1:]


def _xargs(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    with_value = frozenset(
        {"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--arg-file", "--max-args",
         "--max-procs", "--delimiter", "--replace", "--eof", "--max-lines", "--max-chars",
         "--process-slot-var"}
    )  # fmt: skip
    i = _skip(argv, 1, with_value, False)
    command = argv[i:] or [_Arg("echo", "echo")]
    replace = _value_of(argv, i, ("-I", "--replace", "-i"))[0]
    if replace:
        return [_INPUT if a.value == "{}" else a for a in command]
    return [*command, _INPUT]  # xargs appends the words it reads


#: A word a wrapper fills in from its input (``xargs``, ``find -exec {}``): unknown to the hook
#: (an empty ``loose`` form: no file to match when a writer gets it).
_INPUT = _Arg(None, "{}", "")


def _parallel(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``parallel [options] [COMMAND] ::: ARGS``: without a command, each argument (or each
    line of its input) is a command of its own."""

    with_value = frozenset(
        {"-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter", "-I",
         "--colsep", "-N", "-n", "--max-args", "--timeout", "--joblog", "--results",
         "--tmpdir", "--workdir", "--env", "-E", "--eof", "--tag-string", "--shebang-wrap",
         "-L", "--max-lines", "--halt", "--delay", "--memfree", "--load", "-X", "--basefile",
         "--return", "--sshloginfile", "--retries", "--block", "--recstart", "--recend"}
    )  # fmt: skip
    i = _skip(argv, 1, with_value, False)
    separators = (":::", "::::", ":::+", "::::+")
    command = []
    j = i
    while j < len(argv) and argv[j].value not in separators:
        command.append(argv[j])
        j += 1
    if command:
        if any(a.value is not None and "{" in a.value for a in command):
            return [_INPUT if a.value and "{" in a.value else a for a in command]
        return [*command, _INPUT]  # the arguments are appended
    if j < len(argv):  # parallel ::: 'cmd one' 'cmd two'
        for arg in argv[j + 1 :]:
            if arg.value in separators:
                continue
            checker.shell_string([arg], dict(checker.wrap_env), 1, joined=False)
        return []
    checker.add(
        "unparsable",
        f"`{_join(argv)}` runs the commands it reads from its input, which the hook cannot see",
        "run the commands themselves",
    )
    return []


def _find(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``find ... -exec CMD ... ;`` (and ``-execdir``, ``-ok``, ``-okdir``): every CMD is
    checked; the first one is returned, the others checked here."""

    found: list[list[_Arg]] = []
    i = 1
    while i < len(argv):
        if argv[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(argv) and argv[j].value not in (";", "+"):
                j += 1
            found.append(argv[i + 1 : j])
            i = j
        i += 1
    found = [[_INPUT if a.value == "{}" else a for a in inner] for inner in found]
    for inner in found[1:]:
        if inner:
            checker.inner(inner, dict(checker.wrap_env), 1, stdin="", heredoc=None, shebang="")
    return found[0] if found and found[0] else []


def _flock(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    with_value = frozenset({"-w", "--timeout", "--wait", "-E", "--conflict-exit-code"})
    i = _skip(argv, 1, with_value, False)
    rest = argv[i + 1 :]
    if rest and rest[0].value in ("-c", "--command") and len(rest) > 1:
        return [_Arg("sh", "sh"), _Arg("-c", "-c"), rest[1]]
    return rest


def _watch(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    with_value = frozenset({"-n", "--interval", "-q", "--equexit"})
    i = _skip(argv, 1, with_value, False)
    if any(a.value in ("-x", "--exec") for a in argv[1:i]):
        return argv[i:]
    return _as_shell_string(argv[i:])


def _as_shell_string(args: list[_Arg]) -> list[_Arg]:
    """Words a program joins and runs with ``sh -c`` (``watch``, ``sg GROUP CMD``)."""

    if not args:
        return []
    if any(a.value is None for a in args):
        return [_Arg(None, " ".join(a.raw for a in args))]
    text = " ".join(a.value or "" for a in args)
    return [_Arg("sh", "sh"), _Arg("-c", "-c"), _Arg(text, text)]


def _dash_c(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``script -c CMD``, ``nix-shell --run CMD``, ``entr -s CMD``: a shell string."""

    for i, arg in enumerate(argv[1:], start=1):
        value = arg.value or ""
        grouped = value[:1] == "-" and value[1:2] != "-" and value[-1:] in ("c", "s")
        if (grouped or value in ("--command", "--run")) and i + 1 < len(argv):
            return [_Arg("sh", "sh"), _Arg("-c", "-c"), argv[i + 1]]
        if arg.value and arg.value.startswith(("--command=", "--run=")):
            text = arg.value.split("=", 1)[1]
            return [_Arg("sh", "sh"), _Arg("-c", "-c"), _Arg(text, text)]
    if argv[0].value == "entr":
        return argv[_skip(argv, 1, frozenset(), True) :]
    return []


def _sg(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``sg [-] GROUP [-c] COMMAND``: the command string runs with ``sh -c``."""

    i = 1
    if i < len(argv) and argv[i].value == "-":
        i += 1
    i += 1  # the group
    if i < len(argv) and argv[i].value == "-c":
        i += 1
    return _as_shell_string(argv[i:])


def _capsh(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``capsh [--opt=value]... -- ARGS``: ARGS go to ``/bin/bash`` (``-- -c CMD``)."""

    for i, arg in enumerate(argv[1:], start=1):
        if arg.value == "--":
            return [_Arg("bash", "bash"), *argv[i + 1 :]]
        if arg.value == "==":
            return [_Arg("capsh", "capsh"), *argv[i + 1 :]]
    return []


def _tmux(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``tmux new-session|new-window|split-window|respawn-*|run-shell ... 'CMD'`` runs CMD with
    a shell; ``send-keys`` types its words into one."""

    i = _skip(argv, 1, frozenset({"-L", "-S", "-f", "-c", "-T"}), False)
    if i >= len(argv):
        return []
    sub = argv[i].value or ""
    commands = ("new-session", "new", "new-window", "neww", "split-window", "splitw",
                "respawn-pane", "respawnp", "respawn-window", "respawnw", "run-shell", "run",
                "display-popup", "popup")  # fmt: skip
    with_value = frozenset(
        {"-c", "-e", "-F", "-n", "-s", "-t", "-x", "-y", "-l", "-p", "-w", "-h", "-d", "-T",
         "-X", "-N", "-b", "-E", "-B"}
    )  # fmt: skip
    if sub in commands:
        j = _skip(argv, i + 1, with_value - {"-d", "-h", "-b", "-E", "-B"}, False)
        return _as_shell_string(argv[j:])
    if sub in ("send-keys", "send"):
        j = _skip(argv, i + 1, frozenset({"-t", "-N"}), False)
        keys = [a for a in argv[j:] if a.value not in ("Enter", "C-m", "KPEnter")]
        return _as_shell_string(keys)
    return []


def _screen(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``screen [-dmS NAME] COMMAND ARGS`` (``-X stuff`` types into a window: unknown)."""

    with_value = frozenset({"-S", "-c", "-e", "-h", "-p", "-s", "-T", "-t", "-L", "-Logfile"})
    i = _skip(argv, 1, with_value, False)
    if _has(argv, i, "-X", "-r", "-R", "-x", "-ls", "-list", "-wipe"):
        if _has(argv, i, "-X"):
            checker.add(
                "unparsable",
                f"`{_join(argv)}` sends a command to a screen session: the hook cannot see it",
                "run the command itself",
            )
        return []
    return argv[i:]


def _perf(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    if len(argv) < 2 or argv[1].value not in ("stat", "record", "trace", "top", "mem", "c2c"):
        return []
    i = _skip(argv, 2, frozenset({"-e", "--event", "-o", "--output", "-p", "--pid", "-t",
                                  "-r", "-c", "-F", "-m", "-C", "-G", "-x"}), False)  # fmt: skip
    return argv[i:]


def _setarch(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``setarch ARCH [options] [COMMAND]`` (the architecture comes first)."""

    if len(argv) < 2 or (argv[1].value or "").startswith("-"):
        return []  # --list, --help
    return argv[_skip(argv, 2, frozenset(), True) :] or [_Arg("sh", "sh")]


#: bubblewrap's options, by the number of words after them (the others take none).
_BWRAP_ARITY = {
    **dict.fromkeys(
        ("--args", "--uid", "--gid", "--hostname", "--chdir", "--unsetenv", "--lock-file",
         "--sync-fd", "--exec-label", "--file-label", "--seccomp", "--add-seccomp-fd",
         "--block-fd", "--userns-block-fd", "--info-fd", "--json-status-fd", "--userns",
         "--userns2", "--pidns", "--cap-add", "--cap-drop", "--remount-ro", "--proc", "--dev",
         "--tmpfs", "--mqueue", "--dir", "--perms", "--size", "--argv0", "--level-prefix"),
        1,
    ),
    **dict.fromkeys(
        ("--setenv", "--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--ro-bind",
         "--ro-bind-try", "--symlink", "--file", "--bind-data", "--ro-bind-data", "--chmod",
         "--overlay-src", "--tmp-overlay", "--ro-overlay", "--bind-fd", "--ro-bind-fd"),
        2,
    ),
    "--overlay": 3,
}  # fmt: skip


def _bwrap(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``bwrap [options] COMMAND``: the command sees the file system bubblewrap builds."""

    i = 1
    while i < len(argv):
        value = argv[i].value
        if value is None or not value.startswith("--"):
            break
        if value == "--":
            i += 1
            break
        arity = _BWRAP_ARITY.get(value, 0)
        if value == "--clearenv":
            checker.clear_env("bwrap --clearenv")
        elif (value == "--setenv" and i + 1 < len(argv)) or (
            value == "--unsetenv" and i + 1 < len(argv)
        ):
            checker.set_var(argv[i + 1].value or "?")
        i += 1 + arity
    checker.fs_view("bwrap")
    return argv[i:]


def _sub_command(subs: tuple[str, ...], with_value: frozenset[str] = frozenset()) -> Unwrap:
    """``TOOL SUB [options] [--] COMMAND`` (``pyenv exec``, ``asdf exec``, ``mise exec``,
    ``devbox run``, ``flatpak-spawn``...): the command a sub-command runs. ``subs`` empty: the
    command follows the tool's own options."""

    def unwrap(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
        i = 1
        if subs:
            if len(argv) < 2 or argv[1].value not in subs:
                return []
            i = 2
        words = [a.value for a in argv[i:]]
        if "--" in words:
            return argv[i + words.index("--") + 1 :]
        return argv[_skip(argv, i, with_value, False) :]

    return unwrap


def _runcon(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``runcon CONTEXT COMMAND`` or ``runcon [-c] [-u U] [-r R] [-t T] [-l L] COMMAND``."""

    if len(argv) > 1 and not (argv[1].value or "-").startswith("-"):
        return argv[2:]
    return argv[_skip(argv, 1, frozenset({"-u", "-r", "-t", "-l"}), False) :]


def _nix(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``nix develop|shell ... -c|--command CMD ARGS``; ``nix run PKG -- ARGS`` runs a package."""

    for i, arg in enumerate(argv[1:], start=1):
        if arg.value in ("-c", "--command"):
            return argv[i + 1 :]
    return []


def _direnv(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``direnv exec DIR COMMAND``: the command runs with the variables DIR's ``.envrc`` sets
    (unknown to the hook)."""

    if len(argv) < 4 or argv[1].value != "exec":
        return []
    checker.clear_env(f"direnv exec {argv[2].raw}")
    return argv[3:]


def _batch(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``at``/``batch`` read the commands they run later from their input (or ``-f FILE``)."""

    return [_Arg("sh", "sh")]  # the shell's check of its input applies


_STDIN_PATHS = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def assign(env: dict[str, list[str] | None], name: str, values: list[str] | None) -> None:
    """A variable set again may hold any of its values (a branch the hook does not evaluate
    could have set it): the values are united, an unknown one makes it unknown."""

    if name in env:
        before = env[name]
        if before is None or values is None:
            env[name] = None
            return
        values = before + [v for v in values if v not in before]
    env[name] = values


#: Programs that run their arguments (or a string among them) as a command, read as bash and
#: the programs' own option parsers read them. Each entry returns the wrapped command's argv
#: and records what it changes for it (``Checker.set_var``, ``clear_env``, ``fs_view``,
#: ``chdir``). Those that change the user run the command in a reset environment.
_WRAPPERS: dict[str, Unwrap] = {
    "env": _env,
    "exec": _exec,
    "command": _command_builtin,
    "builtin": _fixed(frozenset()),
    "nohup": _fixed(frozenset()),
    "time": _generic("fo", ("--format", "--output")),
    "nice": _generic("n", ("--adjustment",)),
    "timeout": _generic("sk", ("--signal", "--kill-after"), 1),
    "sudo": _sudo,
    "doas": _generic("uC", identity=True, no_command=("-s",)),
    "pkexec": _generic("", ("--user",), identity=True),
    "su": _su,
    "runuser": _su,
    "setpriv": _setpriv,
    "unshare": _unshare,
    "nsenter": _nsenter,
    "chroot": _chroot,
    "systemd-run": _systemd_run,
    "gosu": _generic("", (), 1, identity=True),
    "su-exec": _generic("", (), 1, identity=True),
    "setuidgid": _generic("", (), 1, identity=True),
    "s6-setuidgid": _generic("", (), 1, identity=True),
    "chpst": _generic("ugUeln/cmdofprL", identity=True),
    "sg": _sg,
    "capsh": _capsh,
    "stdbuf": _generic("ioe", ("--input", "--output", "--error")),
    "setsid": _fixed(frozenset()),
    "ionice": _generic("cnp", ("--class", "--classdata", "--pid"), no_command=("-p", "--pid")),
    "taskset": _generic("", ("--cpu-list",), 1, no_command=("-p", "--pid")),
    "chrt": _generic(
        "TPD",
        ("--sched-runtime", "--sched-period", "--sched-deadline"),
        1,
        no_command=("-p", "--pid"),
    ),
    "prlimit": _generic("", (), no_command=("-p", "--pid")),
    "numactl": _generic(
        "mNCpiP", ("--membind", "--cpunodebind", "--physcpubind", "--preferred", "--interleave")
    ),
    "setarch": _setarch,
    "linux32": _fixed(frozenset()),
    "linux64": _fixed(frozenset()),
    "cgexec": _generic("g"),
    "fakeroot": _generic("lis", ("--lib", "--faked")),
    "faketime": _generic("", (), 1),
    "eatmydata": _fixed(frozenset()),
    "torsocks": _generic("aPuiIp", ("--address", "--port", "--user", "--pass")),
    "proxychains": _generic("f"),
    "proxychains4": _generic("f"),
    "dbus-run-session": _generic("", ("--config-file", "--dbus-daemon")),
    "xvfb-run": _generic(
        "nsefpw",
        (
            "--server-num",
            "--server-args",
            "--error-file",
            "--auth-file",
            "--xauth-protocol",
            "--wait",
        ),
    ),
    "rlwrap": _generic("abCDefFgHlOpPqsStwz"),
    "unbuffer": _fixed(frozenset()),
    "catchsegv": _fixed(frozenset()),
    "coproc": _fixed(frozenset()),
    "xargs": _xargs,
    "parallel": _parallel,
    "sem": _parallel,
    "find": _find,
    "flock": _flock,
    "watch": _watch,
    "script": _dash_c,
    "nix-shell": _dash_c,
    "entr": _dash_c,
    "tmux": _tmux,
    "screen": _screen,
    "perf": _perf,
    "at": _batch,
    "batch": _batch,
    "busybox": _busybox,
    "toybox": _busybox,
    "strace": _generic("oepsuEaIbOP"),
    "ltrace": _generic("oepsuan"),
    "valgrind": _fixed(frozenset()),
    "gdb": _generic("x"),
    "firejail": _fixed(frozenset()),
    "direnv": _direnv,
    "bwrap": _bwrap,
    "flatpak-spawn": _generic("", ("--env", "--directory", "--forward-fd")),
    "runcon": _runcon,
    "daemonize": _generic("ceoplu E"),
    "trickle": _generic("udtlsnwLM"),
    "caffeinate": _generic("tw"),
    "sandbox-exec": _generic("fpD"),
    "mpirun": _generic("nNcHx", ("-np", "--np", "--host", "--hostfile", "-machinefile")),
    "mpiexec": _generic("nNcHx", ("-np", "--np", "--host", "--hostfile", "-machinefile")),
    "pyenv": _sub_command(("exec",)),
    "asdf": _sub_command(("exec",)),
    "mise": _sub_command(("exec", "x")),
    "rtx": _sub_command(("exec", "x")),
    "devbox": _sub_command(("run",)),
    "flox": _sub_command(("activate",)),
    "toolbox": _sub_command(
        ("run",), frozenset({"-c", "--container", "-d", "--distro", "-r", "--release"})
    ),
    "distrobox-enter": _sub_command(()),
    "nix": _nix,
}


# -- tools that run a command in a Python environment ---------------------------------------------

_UV_VALUE = frozenset(
    {
        "--with", "-w", "--with-editable", "--with-requirements", "--python", "-p", "--project",
        "--directory", "--package", "--extra", "--group", "--only-group", "--no-group",
        "--index", "--index-url", "--default-index", "--extra-index-url", "--find-links", "-f",
        "--env-file", "--config-file", "--cache-dir", "--prerelease", "--resolution",
        "--exclude-newer", "--upgrade-package", "-P", "--reinstall-package", "--link-mode",
        "--refresh-package", "--keyring-provider", "--index-strategy", "--config-setting", "-C",
        "--color", "--from", "--no-binary-package", "--no-build-package", "--no-extra",
        "--allow-insecure-host", "--python-preference", "--fork-strategy", "--torch-backend",
    }
)  # fmt: skip


def _run_target(checker: Checker, argv: list[_Arg], i: int) -> list[_Arg]:
    """After ``uv run`` and friends: the command, where a ``.py`` file or ``-m`` is run by
    Python itself."""

    rest = argv[i:]
    if not rest:
        return []
    first = rest[0].value
    if first is not None and (first.endswith((".py", ".pyw")) or first == "-"):
        return [_Arg("python", "python"), *rest]
    return rest


def _uv(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    i = _skip(argv, 1, _UV_VALUE, False)
    if i >= len(argv):
        return []
    sub = argv[i].value
    if sub == "tool" and i + 1 < len(argv) and argv[i + 1].value == "run":
        return _uvx(checker, [argv[0], *argv[i + 2 :]])
    if sub != "run":
        return []
    j = i + 1
    while j < len(argv):
        value = argv[j].value
        if value in ("-m", "--module"):
            return [_Arg("python", "python"), _Arg("-m", "-m"), *argv[j + 1 :]]
        if value in ("--script", "-s"):
            return [_Arg("python", "python"), *argv[j + 1 :]]
        if value == "--":
            j += 1
            break
        if value is None or not value.startswith("-"):
            break
        j += 2 if value in _UV_VALUE else 1
    return _run_target(checker, argv, j)


def _uvx(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    i = _skip(argv, 1, _UV_VALUE, False)
    rest = argv[i:]
    if rest and rest[0].value and "@" in rest[0].value:
        name = rest[0].value.split("@", 1)[0]
        rest = [_Arg(name, rest[0].raw), *rest[1:]]
    return rest


def _subcommand_run(global_value: frozenset[str], run_value: frozenset[str]) -> Unwrap:
    """``poetry run``, ``pipenv run``, ``pdm run``, ``hatch run``, ``rye run``, ``pixi run``,
    ``conda run``, ``pipx run``: the command after ``run`` and its options."""

    def unwrap(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
        i = _skip(argv, 1, global_value, False)
        if i >= len(argv) or argv[i].value != "run":
            return []
        j = _skip(argv, i + 1, run_value, False)
        rest = _run_target(checker, argv, j)
        if rest and rest[0].value and ":" in rest[0].value and argv[0].value == "hatch":
            name = rest[0].value.split(":", 1)[1]  # hatch run ENV:COMMAND
            rest = [_Arg(name, rest[0].raw), *rest[1:]]
        return rest

    return unwrap


_CONDA_VALUE = frozenset({"-n", "--name", "-p", "--prefix", "--cwd"})
_RUNNING_TOOLS: dict[str, Unwrap] = {
    "uv": _uv,
    "uvx": _uvx,
    "poetry": _subcommand_run(frozenset({"-C", "--directory", "-P", "--project"}), frozenset()),
    "pipenv": _subcommand_run(frozenset(), frozenset()),
    "pdm": _subcommand_run(frozenset({"-p", "--project"}), frozenset({"-p", "--project"})),
    "hatch": _subcommand_run(frozenset({"-e", "--env", "-p", "--project"}), frozenset()),
    "rye": _subcommand_run(frozenset(), frozenset({"--pyproject"})),
    "pixi": _subcommand_run(frozenset(), frozenset({"-e", "--environment", "--manifest-path"})),
    "conda": _subcommand_run(frozenset(), _CONDA_VALUE),
    "mamba": _subcommand_run(frozenset(), _CONDA_VALUE),
    "micromamba": _subcommand_run(frozenset(), _CONDA_VALUE),
    "pipx": _subcommand_run(frozenset(), frozenset({"--spec", "--python", "--index-url"})),
}
