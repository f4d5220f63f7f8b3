"""Split python-sb's command line the way CPython 3.11 splits ``python``'s.

``python-sb [python options] [python-sb options] (script | -m mod | -c cmd | - | nothing) [args]``

CPython's own options are parsed with the rules of ``Python/getopt.c`` (grouped flags such as
``-Im json.tool``, glued values such as ``-mjson.tool``, ``-cCODE``, ``-Werror``, ``--`` ending the
options, ``-V`` deferred to the end of the options, ``-h`` immediate) and the same error messages,
with python-sb's name in the usage line. Options that start with ``--`` and are not CPython's are
python-sb's: sub-commands (``--explain``), run options (``--learn``, ``--audit``, ``--denials``,
``--pysandboxes-config``) and rule lines (``--key=value``; ``--key`` alone means ``key=``). Every
word after the program belongs to the program, untouched.

Pure: no I/O, so it is cheap and unit-testable.

The public interface, for python-sb itself and for whatever must read a python-sb command
line the way python-sb will (the coding-agent hook, ``integrations/``): :func:`parse`,
:class:`CommandLine` (with :attr:`CommandLine.sb_options`, python-sb's own options as
written), :func:`widening` (the options that widen the rules), :data:`SUBCOMMANDS` and
:func:`subcommand_of` (a first word that runs no program). They are kept stable: a change is a
change of this docstring too.
"""

from __future__ import annotations

PROG = "python-sb"

#: CPython's one-letter options without a value ("bBc:dEhiIJm:OPqRsStuvVW:xX:?" in getopt.c).
SHORT_FLAGS = frozenset("bBdEiIOPqRsStuvx")
#: One-letter options taking a value, glued (``-Werror``) or as the next word (``-W error``).
SHORT_VALUE = frozenset("WX")
#: CPython's long options that only print something and exit.
HELP_LONG = {"--help-env": "help-env", "--help-xoptions": "help-xoptions", "--help-all": "help-all"}
HASH_PYCS_MODES = ("default", "always", "never")

#: python-sb's own options that take no value.
SB_FLAGS = frozenset({"explain", "json", "audit"})
#: python-sb's own options that take a value, as ``--opt=VALUE`` or ``--opt VALUE``.
SB_VALUED = frozenset({"pysandboxes-config", "denials"})

#: Sub-commands that run no program: ``python-sb --VERB ...`` as the *first* word hands the
#: rest to the verb (``launch/cli.TOOLS`` names the module of each); ``--VERB=VALUE`` passes
#: VALUE as the verb's first word. (``--explain`` takes the arguments of a run: it is parsed
#: with them, ``CommandLine.action == "explain"``.)
SUBCOMMANDS = (
    "--review",
    "--check",
    "--hook",
    "--install-hook",
    "--uninstall-hook",
    "--providers",
    "--export",
)

#: The kinds of :attr:`CommandLine.sb_options` that widen the rules python-sb enforces: a
#: rule line (``--key=value``), learning (``--learn[=FILE]``: allow and record everything),
#: audit (``--audit``: enforce nothing). ``config`` (``--pysandboxes-config``) replaces the
#: rule file rather than widening it; ``denials``, ``explain`` and ``json`` widen nothing.
WIDENING_KINDS = frozenset({"rule", "learn", "audit"})


def subcommand_of(words: list[str]) -> str | None:
    """The sub-command ``words`` (``sys.argv[1:]``) start with (``"--review"``...), or
    ``None`` for a run (or ``--explain``): see :data:`SUBCOMMANDS`."""

    if words and words[0].partition("=")[0] in SUBCOMMANDS:
        return words[0].partition("=")[0]
    return None


def widening(cmd: CommandLine) -> list[str]:
    """The python-sb options of ``cmd`` that widen its rules, as written (``--learn``,
    ``--audit``, ``--os-sandbox=none``...), in order: see :data:`WIDENING_KINDS`."""

    return [text for kind, text in cmd.sb_options if kind in WIDENING_KINDS]


class UsageError(Exception):
    """A command line CPython would refuse; printed with the usage lines, exit status 2."""


class CommandLine:
    """The parts of one command line.

    - ``python_options``: CPython options for the sandboxed interpreter, one word per option
      (``["-I", "-W", "error"]``); ``-i`` included when given; ``-c``/``-m`` never.
    - ``kind``: ``script``, ``module``, ``code``, ``stdin`` or ``repl`` (no program: the REPL when
      stdin is a terminal or ``-i`` is given, else stdin is read as a program, as CPython does).
    - ``program``: the script path as written, module name or code; ``None`` for stdin/REPL.
    - ``args``: the program's arguments (``sys.argv[1:]``).
    - ``rules``: ``--key=value`` options, in order, as (key, value).
    - ``learn``: ``None`` (not asked), ``""`` (``--learn``) or a file (``--learn=FILE``).
    - ``action``: ``run``, ``explain``, ``help``, ``version``, or one of CPython's help pages.
    - ``python_words``: the words given for the interpreter (python options and program), for
      ``sys.orig_argv`` in the child.
    - ``sb_options``: python-sb's own options as written, in order, as ``(kind, text)``:
      kind ``rule``, ``learn``, ``audit``, ``config``, ``denials``, ``explain`` or ``json``;
      text the option's words (``--pysandboxes-config FILE`` when given as two words).

    A plain class, not a dataclass: ``dataclasses`` imports ``inspect``, which costs more
    start-up time than all of this module (DESIGN decision 7).
    """

    def __init__(self) -> None:
        self.python_options: list[str] = []
        self.kind = "repl"
        self.program: str | None = None
        self.args: list[str] = []
        self.no_program = True
        self.rules: list[tuple[str, str]] = []
        self.config: str | None = None
        self.learn: str | None = None
        self.audit = False
        self.denials: str | None = None
        self.json = False
        self.action = "run"
        self.version_level = 0
        self.skip_first_line = False
        self.python_words: list[str] = []
        self.sb_options: list[tuple[str, str]] = []

    def flag(self, letter: str) -> int:
        """How many times the one-letter flag ``letter`` was given (``-vv`` counts 2)."""

        return self.python_options.count("-" + letter)

    @property
    def target(self) -> str | None:
        """What the rule-file lookup needs: the script path or module name."""

        return self.program if self.kind in ("script", "module") else None


def usage_text() -> str:
    return (
        f"usage: {PROG} [option] ... [--key=value ...] [-c cmd | -m mod | file | -] [arg] ...\n"
        f"Try `{PROG} -h' for more information.\n"
    )


def parse(words: list[str]) -> CommandLine:
    """Split ``words`` (``sys.argv[1:]``); :class:`UsageError` when CPython would refuse them."""

    cmd = CommandLine()
    i = 0
    n = len(words)
    stop = False
    while i < n and not stop:
        word = words[i]
        if word == "--":
            cmd.python_words.append(word)
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            i = _long_option(cmd, words, i)
            if cmd.action not in ("run", "explain"):
                return cmd
            continue
        cmd.python_words.append(word)
        i += 1
        j = 1
        while j < len(word):
            letter = word[j]
            j += 1
            if letter in "cm":
                if j < len(word):
                    value = word[j:]
                else:
                    if i >= n:
                        raise UsageError(f"Argument expected for the -{letter} option")
                    value = words[i]
                    cmd.python_words.append(value)
                    i += 1
                cmd.kind = "code" if letter == "c" else "module"
                cmd.program = value
                cmd.no_program = False
                stop = True
                break
            if letter in SHORT_VALUE:
                if j < len(word):
                    value = word[j:]
                else:
                    if i >= n:
                        raise UsageError(f"Argument expected for the -{letter} option")
                    value = words[i]
                    cmd.python_words.append(value)
                    i += 1
                cmd.python_options += [f"-{letter}", value]
                break
            if letter in "h?":
                cmd.action = "help"
                return cmd
            if letter == "V":
                cmd.version_level += 1
                continue
            if letter == "J":
                raise UsageError("-J is reserved for Jython")
            if letter == "x":
                cmd.skip_first_line = True
                continue
            if letter in SHORT_FLAGS:
                cmd.python_options.append(f"-{letter}")
                continue
            raise UsageError(f"Unknown option: -{letter}")
    if cmd.version_level:
        cmd.action = "version"
        return cmd
    if cmd.no_program and i < n:
        cmd.no_program = False
        if words[i] == "-":
            cmd.kind = "stdin"
        else:
            cmd.kind = "script"
            cmd.program = words[i]
        cmd.python_words.append(words[i])
        i += 1
    cmd.args = list(words[i:])
    if cmd.json and cmd.action != "explain":
        raise UsageError("--json goes with --explain")
    return cmd


def _long_option(cmd: CommandLine, words: list[str], i: int) -> int:
    """Handle the ``--word`` at ``words[i]``; the index of the next word."""

    word = words[i]
    if word == "--help":
        cmd.action = "help"
        return i + 1
    if word == "--version":
        cmd.version_level += 1
        cmd.python_words.append(word)
        return i + 1
    if word in HELP_LONG:
        cmd.action = HELP_LONG[word]
        return i + 1
    if word == "--check-hash-based-pycs":
        if i + 1 >= len(words):
            raise UsageError(f"Argument expected for the {word} options")
        mode = words[i + 1]
        if mode not in HASH_PYCS_MODES:
            raise UsageError(
                "--check-hash-based-pycs must be one of 'default', 'always', or 'never'"
            )
        cmd.python_options += [word, mode]
        cmd.python_words += [word, mode]
        return i + 2
    name, eq, value = word[2:].partition("=")
    if not name:
        raise UsageError(f"unknown option {word}")
    if name in SB_FLAGS:
        if eq:
            raise UsageError(f"option --{name} takes no value")
        if name == "explain":
            cmd.action = "explain"
        elif name == "json":
            cmd.json = True
        else:
            cmd.audit = True
        cmd.sb_options.append((name, word))
        return i + 1
    if name in SB_VALUED:
        text = word
        if not eq:
            if i + 1 >= len(words):
                raise UsageError(f"Argument expected for the --{name} option")
            value = words[i + 1]
            text = f"{word} {value}"
            i += 1
        if not value:
            raise UsageError(f"--{name} needs a file name")
        if name == "denials":
            cmd.denials = value
            cmd.sb_options.append(("denials", text))
        else:
            cmd.config = value
            cmd.sb_options.append(("config", text))
        return i + 1
    if name == "learn":
        cmd.learn = value
        cmd.sb_options.append(("learn", word))
        return i + 1
    cmd.rules.append((name, value))
    cmd.sb_options.append(("rule", word))
    return i + 1
