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
- writes, moves or deletes a rule file (``*.py-sandboxes``);
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

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "busybox"})
#: ``python -m MODULE`` that run no program of the project (environment management).
DEFAULT_ALLOWED_MODULES = frozenset({"venv", "pip", "ensurepip", "virtualenv", "pipx", "uv"})
#: Python programs that import and run the project's own code.
DEFAULT_RUNNERS = frozenset({"pytest", "py.test", "jupyter", "jupyter-notebook", "jupyter-lab"})
#: The key, in the variables of a scope, of the current directory (``cd`` is followed).
CWD = "\0cwd"
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
    {"rm", "unlink", "shred", "truncate", "touch", "chmod", "chown", "chgrp", "tee", "mv"}
)
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
        #: variables set for the command being checked (``NAME=v cmd``, ``env NAME=v``, earlier
        #: assignments of the same text): those that act on python-sb's own interpreter
        self.launcher_vars: set[str] = set()
        self.findings: list[Finding] = []

    # -- entry points ----------------------------------------------------------------------------

    def check(self, command: str) -> list[Finding]:
        """The reasons to refuse ``command`` (empty: it passes)."""

        self.findings = []
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
        for word in node.words:
            self.walk_nested(word.nested, env, d)

    def redirect(self, redirect: Redirect, env: dict[str, list[str] | None], depth: int) -> None:
        if redirect.target is not None:
            self.walk_nested(redirect.target.nested, env, depth)
        self.walk_nested(redirect.body_nested, env, depth)
        if redirect.op in (">", ">>", ">|", "&>", "&>>", "<>") and redirect.target is not None:
            for value in self.expand(redirect.target, env) or []:
                if is_rule_file(value):
                    self.rule_write(value)

    def rule_write(self, path: str) -> None:
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
        if any(r.op in ("<", "<&") for r in node.redirects):
            stdin = "file"
        first = self.expand(node.words[0], env)
        if first is not None and first[0] in _DECLARE:
            for word in node.words[1:]:
                values = self.expand(word, env)
                if values and len(values) == 1 and "=" in values[0]:
                    var, _, text = values[0].partition("=")
                    assign(env, var, [text])
                elif word.literal() is None and "=" in word.raw:
                    env[word.raw.partition("=")[0]] = None
        if first is not None and first[0] in _READERS:
            for word in node.words[1:]:
                target = word.literal()
                if target and _is_plain_name(target):
                    env[target] = None
        if first is not None and first[0] == "printf":
            for i, word in enumerate(node.words[1:-1], start=1):
                target = node.words[i + 1].literal()
                if word.literal() == "-v" and target:
                    env[target] = None
        if first is None:
            self.dynamic(node.words[0].raw)
            return
        self.here = self.directory(env)
        # variables python-sb itself would start with: set on this command, or earlier in the text
        self.launcher_vars = {name for name, _ in node.assigns} | {
            name for name in env if name != CWD
        }
        if first[0] in ("cd", "pushd"):
            self.change_directory(node, env)
        rest = [self.arg(word, env) for word in node.words[1:]]
        expanded = any(part[0] != "lit" for part in node.words[0].parts)
        for program in first:
            argv = [_Arg(program, node.words[0].raw), *rest]
            if expanded and program.split() != [program]:
                # an unquoted expansion is split into words: "$C" = "python3 x.py"
                argv = [_Arg(w, node.words[0].raw) for w in program.split()] + rest
                if not argv:
                    continue
            self.command(argv, env, depth, stdin=stdin, heredoc=heredoc)

    def directory(self, env: dict[str, list[str] | None]) -> str | None:
        if CWD not in env:
            return self.cwd
        values = env[CWD]
        return values[0] if values and len(values) == 1 else None

    def change_directory(self, node: Node, env: dict[str, list[str] | None]) -> None:
        """``cd DIR`` in this scope: later relative paths are read from DIR."""

        args = [w for w in node.words[1:] if not (w.literal() or "").startswith("-")]
        values = self.expand(args[0], env) if args else [os.path.expanduser("~")]
        here = self.directory(env)
        if values is None or len(values) != 1 or here is None or values[0] == "-":
            env[CWD] = None
            return
        env[CWD] = [os.path.normpath(os.path.join(here, os.path.expanduser(values[0])))]

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
            self.python_sb(argv, shebang=shebang)
        elif python_like(name):
            self.python(argv, env, depth, stdin=stdin, shebang=shebang)
        elif name in self.settings.runners:
            self.runner(argv, shebang=shebang)
        elif name in SHELLS:
            self.shell(argv, env, depth, stdin=stdin, heredoc=heredoc)
        elif name in _WRAPPERS:
            if name in ("env", "sudo", "doas"):
                for arg in argv[1:]:
                    if arg.value and "=" in arg.value and _is_plain_name(arg.value.split("=")[0]):
                        self.launcher_vars.add(arg.value.split("=", 1)[0])
            inner = _WRAPPERS[name](self, argv)
            if inner:
                self.inner(inner, env, depth, stdin=stdin, heredoc=heredoc, shebang=shebang)
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
                self.inner(inner, env, depth, stdin=stdin, heredoc=heredoc, shebang=shebang)
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
        self.command(inner, env, depth + 1, stdin=stdin, heredoc=heredoc, shebang=shebang)

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
        elif name in ("sed", "perl") and any(
            v.startswith("-i") or v == "--in-place" for v in values
        ):
            targets = values
        elif name == "dd":
            targets = [v[3:] for v in values if v.startswith("of=")]
        elif name == "git" and values and values[0] in ("rm", "mv", "checkout", "restore"):
            targets = values[1:]
        elif name == "find" and "-delete" in values:
            targets = [v for v in values if "py-sandboxes" in v]
        recursive = name in ("rm", "git") and any(
            (v.startswith("-") and not v.startswith("--") and ("r" in v or "R" in v))
            or v == "--recursive"
            for v in values
        )
        for target in targets:
            if target.startswith("-"):
                continue
            found = self.rule_files_in(target, recursive=recursive)
            if found:
                self.rule_write(found)
                return

    def rule_files_in(self, target: str, *, recursive: bool) -> str:
        """The rule file ``target`` names (or one its glob matches, or, for ``rm -r``, one
        under the directory it names); empty if none."""

        if is_rule_file(target) or "py-sandboxes" in os.path.basename(target):
            return target
        here = self.here or self.cwd
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
            self.python_sb([argv[0], *argv[after:]], shebang=shebang)
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

    def python_sb(self, argv: list[_Arg], *, shebang: str = "") -> None:
        """``python-sb ...``: refuse the options that widen or replace the rules."""

        config: str | None = None
        config_arg = ""
        script: str | None = None
        widening: list[str] = []
        explain = False
        program = "repl"
        i = 1
        while i < len(argv):
            value = argv[i].value
            if value is None:
                if not argv[i].raw.startswith("-"):
                    program = "script"
                    break
                self.add(
                    "dynamic",
                    f"a python-sb option is computed when the command runs ({argv[i].raw})",
                    "write python-sb's options literally",
                )
                return
            if i == 1 and value.split("=")[0] in (
                "--review",
                "--check",
                "--hook",
                "--install-hook",
                "--uninstall-hook",
            ):
                return  # a sub-command: runs no program
            if value == "--":
                script = argv[i + 1].value if i + 1 < len(argv) else None
                program = "script"
                break
            if not value.startswith("-") or value == "-":
                script = value
                program = "script"
                break
            if value.startswith("--"):
                key, eq, rest = value[2:].partition("=")
                if key == "pysandboxes-config":
                    if eq:
                        config = rest
                    else:
                        config = argv[i + 1].value if i + 1 < len(argv) else ""
                        i += 1
                    config_arg = value
                elif key in ("explain", "json", "help", "version"):
                    explain = explain or key == "explain"
                elif key == "denials":
                    i += 0 if eq else 1
                elif key == "check-hash-based-pycs":
                    i += 1
                elif key.startswith("help-"):
                    pass
                else:
                    widening.append(value)
                i += 1
                continue
            letters = value[1:]
            if "c" in letters or "m" in letters:
                # -c code / -m module: the program; its rules come from the file
                program = "module" if "m" in letters.split("c")[0] else "code"
                break
            if letters[-1:] in ("W", "X"):
                i += 1
            i += 1
        if explain:
            return
        base = "python-sb" + (f" {quote(script)}" if script else "")
        for variable in sorted(self.launcher_vars):
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
        for option in widening:
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
        if config is None and program != "module" and not self.rules_found(script):
            where = f"next to {script} nor " if script and script != "-" else ""
            self.add(
                "sb-learning",
                f"no .py-sandboxes {where}in the current directory: python-sb would run in "
                "learning mode, which allows everything and records it",
                "ask the user for the rule file of this program; do not create one yourself",
            )
        if config is not None and not self.config_allowed(config, script):
            self.add(
                "sb-config",
                f"`{config_arg}` replaces the rule file that python-sb would use"
                + (" for this script" if script else ""),
                f"{base} (without --pysandboxes-config; the .py-sandboxes next to the script "
                "applies)",
            )

    def rules_found(self, script: str | None) -> bool:
        """A rule file python-sb would find for ``script`` (next to it, or in the current
        directory; for ``-c`` code and the REPL, in the current directory)."""

        here = self.here or self.cwd
        places = [here]
        if script and script != "-":
            places.insert(0, os.path.dirname(os.path.join(here, os.path.expanduser(script))))
        return any(os.path.isfile(os.path.join(p, ".py-sandboxes")) for p in places)

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
        self.check_text(text, dict(env), depth + 1)

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
            self.add(
                "unreadable",
                f"the hook cannot tell which file {path} is after a `cd` it cannot follow",
                "use the script's absolute path, or a literal cd",
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
            if is_rule_file(name):
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
    ``with_value`` lists the options that take the next word (long ones may use ``=``)."""

    i = start
    while i < len(argv):
        value = argv[i].value
        if value is None:
            return i
        if value == "--":
            return i + 1
        if not value.startswith("-") or value == "-":
            return i
        if value in with_value:
            i += 2
            continue
        if not value.startswith("--") and len(value) > 2 and value[:2] in with_value:
            i += 1  # a short option with its value glued (-uroot)
            continue
        i += 1
    return i


def _env(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
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
            return [_Arg(w, w) for w in _split(text)] + argv[i:]
        if value == "--":
            i += 1
            break
        if value in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif value.startswith("-") or ("=" in value and _is_plain_name(value.split("=", 1)[0])):
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


def _command_builtin(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    values = [a.value for a in argv[1:]]
    if any(v in ("-v", "-V") for v in values):
        return []  # a look-up, runs nothing
    return argv[_skip(argv, 1, frozenset(), True) :]


def _sudo(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    with_value = frozenset({"-u", "-g", "-C", "-D", "-p", "-r", "-t", "-U", "-T", "-R", "-h"})
    i = _skip(argv, 1, with_value, False)
    while (
        i < len(argv)
        and argv[i].value
        and "=" in (argv[i].value or "")
        and _is_plain_name((argv[i].value or "").split("=")[0])
    ):
        i += 1
    return argv[i:]


def _xargs(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    with_value = frozenset({"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--arg-file"})
    i = _skip(argv, 1, with_value, False)
    return argv[i:] or [_Arg("echo", "echo")]


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
    for inner in found[1:]:
        if inner:
            checker.inner(inner, {}, 1, stdin="", heredoc=None, shebang="")
    return found[0] if found and found[0] else []


def _flock(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    with_value = frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"})
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
    args = argv[i:]
    if not args:
        return []
    if any(a.value is None for a in args):
        return [_Arg(None, " ".join(a.raw for a in args))]
    text = " ".join(a.value or "" for a in args)
    return [_Arg("sh", "sh"), _Arg("-c", "-c"), _Arg(text, text)]


def _dash_c(checker: Checker, argv: list[_Arg]) -> list[_Arg]:
    """``su -c CMD``, ``script -c CMD``, ``nix-shell --run CMD``: a shell string."""

    for i, arg in enumerate(argv[1:], start=1):
        value = arg.value or ""
        grouped = value[:1] == "-" and value[1:2] != "-" and value.endswith("c")
        if (grouped or value in ("--command", "--run")) and i + 1 < len(argv):
            return [_Arg("sh", "sh"), _Arg("-c", "-c"), argv[i + 1]]
        if arg.value and arg.value.startswith(("--command=", "--run=")):
            text = arg.value.split("=", 1)[1]
            return [_Arg("sh", "sh"), _Arg("-c", "-c"), _Arg(text, text)]
    return []


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


_WRAPPERS: dict[str, Unwrap] = {
    "env": _env,
    "exec": _fixed(frozenset({"-a"})),
    "command": _command_builtin,
    "builtin": _fixed(frozenset()),
    "nohup": _fixed(frozenset()),
    "time": _fixed(frozenset({"-f", "--format", "-o", "--output"})),
    "nice": _fixed(frozenset({"-n", "--adjustment"})),
    "timeout": _fixed(frozenset({"-s", "--signal", "-k", "--kill-after"}), positional=1),
    "sudo": _sudo,
    "doas": _fixed(frozenset({"-u", "-C"})),
    "stdbuf": _fixed(frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    "setsid": _fixed(frozenset()),
    "ionice": _fixed(frozenset({"-c", "-n", "--class", "--classdata"})),
    "taskset": _fixed(frozenset(), positional=1),
    "chrt": _fixed(frozenset(), positional=1),
    "unbuffer": _fixed(frozenset()),
    "catchsegv": _fixed(frozenset()),
    "coproc": _fixed(frozenset()),
    "xargs": _xargs,
    "parallel": _xargs,
    "find": _find,
    "flock": _flock,
    "watch": _watch,
    "su": _dash_c,
    "runuser": _dash_c,
    "script": _dash_c,
    "nix-shell": _dash_c,
    "strace": _fixed(frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-I", "-b", "-O", "-P"})),
    "ltrace": _fixed(frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-n"})),
    "valgrind": _fixed(frozenset()),
    "firejail": _fixed(frozenset()),
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
