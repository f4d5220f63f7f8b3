"""Rule files → :class:`~pysandboxes.policy.model.Policy` (SPEC §2.1 to §2.6).

Two passes. The first reads the main file and its includes depth first, at the point of each
``include``, and turns every line into a :class:`RuleLine` (variables expanded, except in
``env=`` whose value is kept as a template). Command-line rules follow, with origin ``<arg>``.
The second pass checks every line against its key and builds the typed rules, single-key
settings and cross-line checks (duplicates, env pattern ties, the lock). Every problem is
collected; if there is any, :class:`~pysandboxes.errors.ConfigError` carries all of them,
sorted by file and line.
"""

from __future__ import annotations

import os
import stat
import sys

from pysandboxes.errors import ConfigError, ConfigProblem
from pysandboxes.policy import keys
from pysandboxes.policy.model import (
    PROVIDERS,
    ApiRule,
    EnvRule,
    IncludeInfo,
    NameRule,
    NetRule,
    Origin,
    PathRule,
    Policy,
    RuleLine,
    SecretRule,
    Setting,
)
from pysandboxes.policy.syntax import (
    LineSyntaxError,
    Var,
    expand,
    is_var_name,
    scan_value,
    split_line,
)
from pysandboxes.policy.template import LEARNED_BEGIN, LEARNED_END

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from pysandboxes.policy.syntax import Part

__all__ = ["Loader", "globs_intersect", "load", "variables_read"]

_GLOB_CHARS = frozenset("*?[")
_END_PREFIX = LEARNED_END.rstrip("- ")


def _problem(origin: Origin, message: str) -> ConfigProblem:
    return ConfigProblem(str(origin), one_line(message), origin.sort_key)


def one_line(message: str) -> str:
    """A message on one line: control characters (from a value) shown escaped."""

    if message.isprintable():
        return message
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


class Loader:
    """One load: the state shared by both passes. Use :func:`load`."""

    def __init__(
        self,
        environ: Mapping[str, str],
        cwd: str,
        learned_ok: bool = False,
        flavour: str | None = None,
    ) -> None:
        from pysandboxes.policy.decide import _path_flavour

        #: Windows paths (drive letters, ``\\``, case ignored: policy/pathforms.py)?
        self.windows = (flavour or _path_flavour()) == "windows"
        self.sep = "\\" if self.windows else "/"
        self.environ = environ
        self.cwd = cwd
        self.learned_ok = learned_ok
        self.problems: list[ConfigProblem] = []
        self.lines: list[RuleLine] = []
        self.includes: list[IncludeInfo] = []
        self.rule_files: list[str] = []
        self.warnings: list[str] = []
        #: every environment variable a loaded line reads (``${NAME}``, defaults included, the
        #: host side of ``env=`` lines, ``HOME`` for a ``~`` path): name -> the first origin.
        #: Setting one of them changes the rules (``OS_SANDBOX=none``), see
        #: :func:`variables_read`.
        self.variables: dict[str, str] = {}
        self._seen: set[str] = set()
        #: (file, line) -> the variables of a value that expanded to nothing, unset or empty
        #: (named by the error "expose-ro= needs a path").
        self.empty_vars: dict[tuple[str | None, int], list[str]] = {}
        #: (file, line) -> the variables (without a default) that expanded to nothing in a path
        #: that is not empty for all that (``~/${NOPE}``).
        self.unset_in_path: dict[tuple[str | None, int], list[str]] = {}

    # -- helpers --------------------------------------------------------------------------------

    def error(self, origin: Origin, message: str) -> None:
        self.problems.append(_problem(origin, message))

    @property
    def home(self) -> str:
        if self.windows:  # as ntpath.expanduser: USERPROFILE, else HOMEDRIVE and HOMEPATH
            profile = self.environ.get("USERPROFILE") or (
                self.environ.get("HOMEDRIVE", "") + self.environ.get("HOMEPATH", "")
            )
            return profile if profile else os.path.expanduser("~")
        home = self.environ.get("HOME")
        return home if home else os.path.expanduser("~")

    def lookup(self, name: str) -> str | None:
        return self.environ.get(name)

    def absolute(self, path: str, *, base: str | None = None) -> str:
        """``~``, ``~user``, absolute, else relative to ``base`` (default: the cwd); normalised.

        Raises ``ValueError`` for a path no file can have (a NUL, a lone surrogate).
        """

        if "\0" in path:
            raise ValueError(f"a path cannot contain a NUL character: {path!r}")
        if self.windows:  # the forms Windows resolves differently are refused (pathforms.py)
            from pysandboxes.policy.pathforms import FORMS

            return FORMS.absolute(path, base if base is not None else self.cwd, self.home)
        try:
            os.fsencode(path)
        except UnicodeEncodeError:
            raise ValueError(f"{path!r} cannot be encoded as a file name") from None
        if path == "~" or path.startswith("~/"):
            path = self.home.rstrip("/") + path[1:] if path != "~" else self.home
        elif path.startswith("~"):
            path = os.path.expanduser(path)
        if not os.path.isabs(path):
            path = os.path.join(base if base is not None else self.cwd, path)
        return os.path.normpath(path)

    # -- pass 1: files --------------------------------------------------------------------------

    def read_main(self, path: str, text: str | None = None) -> None:
        """Load the main rule file (``text`` given: parse it as that file's content)."""

        if text is None:
            try:
                text = _read(path)
            except FileNotFoundError:
                return
            except _NotUtf8 as exc:
                self.error(Origin(path, exc.line), "the rule file is not UTF-8 text")
                return
            except (OSError, ValueError) as exc:
                self.problems.append(
                    ConfigProblem(
                        str(Origin(path, 0)).removesuffix("(0)"),
                        f"cannot read the rule file: {_reason(exc)}",
                        (path, 0),
                    )
                )
                return
        self._mark_loaded(path)
        self._read_text(path, text)

    def _mark_loaded(self, path: str) -> None:
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        self._seen.add(real)
        self.rule_files.append(real)

    def _read_text(self, path: str, text: str) -> None:
        learned = False
        if text.startswith("\ufeff"):
            text = text[1:]
        # Lines end at "\n" only (as editors and `wc -l` count them), with an optional "\r".
        for number, raw in enumerate(text.split("\n"), 1):
            raw = raw.removesuffix("\r")
            stripped = raw.strip()
            if stripped.startswith("#"):
                if stripped.startswith(LEARNED_BEGIN):
                    learned = True
                elif stripped.startswith(_END_PREFIX):
                    learned = False
                continue
            origin = Origin(path, number, learned)
            try:
                split = split_line(raw)
                if split is None:
                    continue
                key, value = split
                if key == "include":
                    self._include(value, origin)
                else:
                    self._add(key, value, origin, comments=True)
            except ValueError as exc:  # LineSyntaxError, or a path no file can have
                self.error(origin, str(exc))

    def _add(self, key: str, value: str, origin: Origin, *, comments: bool) -> None:
        if key == "env":
            name, eq, template = value.partition("=")
            if not eq:
                raise LineSyntaxError(
                    f"env={value} has no value: write env=NAME=VALUE "
                    "(for the host's value: env=NAME=${NAME})"
                )
            if not is_var_name(name, pattern=True):
                raise LineSyntaxError(
                    f"bad variable name {name!r} in env=: letters, digits and '_' "
                    "(and '*' in a pattern such as PAT_*)"
                )
            check = _env_var_check(name)
            parts, end = scan_value(template, comments=comments, var_check=check)
            self.note_variables(parts, origin)
            written = template[:end].rstrip(" \t")
            self.lines.append(RuleLine("env", f"{name}={written}", origin))
            return
        parts, _end = scan_value(value, comments=comments)
        self.note_variables(parts, origin)
        expanded = expand(parts, self.lookup)
        if key in _PATH_KEYS and expanded.startswith("~"):
            self.variables.setdefault("HOME", str(origin))
        if not expanded and any(not isinstance(part, str) for part in parts):
            names = [p.name for p in parts if not isinstance(p, str) and not self.lookup(p.name)]
            self.empty_vars[(origin.file, origin.line)] = names
        elif expanded and key in _PATH_KEYS:
            # A path with a part that expanded to nothing (``~/${NOPE}`` is ``~/``): named by
            # the expose- error rather than widened silently; ``${NOPE:-}`` says empty is meant.
            names = [
                p.name
                for p in parts
                if not isinstance(p, str) and p.default is None and not self.lookup(p.name)
            ]
            if names:
                self.unset_in_path[(origin.file, origin.line)] = names
        self.lines.append(RuleLine(key, expanded, origin))

    def note_variables(self, parts: tuple[Part, ...], origin: Origin) -> None:
        """Record the variables ``parts`` refer to, those of every default too (a default is
        read when the variable is emptied)."""

        for part in parts:
            if isinstance(part, Var):
                self.variables.setdefault(part.name, str(origin))
                if part.default is not None:
                    self.note_variables(part.default, origin)

    def _include(self, rest: str, origin: Origin) -> None:
        if not rest.startswith('"'):
            raise LineSyntaxError('include takes a path in double quotes: include "PATH"')
        close = rest.find('"', 1)
        if close < 0:
            raise LineSyntaxError('unterminated " quote in include')
        after = rest[close + 1 :].strip()
        if after and not after.startswith("#"):
            raise LineSyntaxError(f'unexpected text after include "PATH": {after!r}')
        parts, _end = scan_value(rest[: close + 1], comments=False)
        self.note_variables(parts, origin)
        written = rest[1:close]
        target = expand(parts, self.lookup)
        if target.startswith("~"):
            self.variables.setdefault("HOME", str(origin))
        if not target:
            raise LineSyntaxError("include of an empty path")
        assert origin.file is not None
        anchored = target.startswith(("./", "../", "~", "/")) or target in (".", "..")
        if self.windows:  # .\x, ..\x, \x, C:\x
            anchored = anchored or target.startswith((".\\", "..\\", "\\")) or target[1:2] == ":"
        if anchored:
            resolved = self.absolute(target)  # from the cwd, home, or absolute
        else:  # a bare name: next to the including file
            resolved = self.absolute(target, base=os.path.dirname(origin.file))
        try:
            real = os.path.realpath(resolved)
        except (OSError, ValueError) as exc:
            raise LineSyntaxError(f"cannot include {written!r}: {_reason(exc)}") from None
        if real in self._seen:
            self.includes.append(IncludeInfo(written, resolved, origin, "cycle"))
            return
        try:
            text = _read(resolved)
        except (FileNotFoundError, NotADirectoryError):
            self.includes.append(IncludeInfo(written, resolved, origin, "missing"))
            return
        except (OSError, ValueError) as exc:
            raise LineSyntaxError(
                f"cannot read included file {resolved}: {_reason(exc)} (an unreadable include "
                "is refused: skipping it could drop rules such as a lock)"
            ) from None
        self.includes.append(IncludeInfo(written, resolved, origin, "loaded"))
        self._mark_loaded(resolved)
        self._read_text(resolved, text)

    def add_cli(self, rules: Sequence[tuple[str, str]]) -> None:
        for index, (key, value) in enumerate(rules, 1):
            origin = Origin(None, index)
            try:
                if not key or not all(c in _KEY_OK for c in key):
                    raise LineSyntaxError(f"{key!r} is not a key")
                if key == "include":
                    raise LineSyntaxError("include is a directive of rule files, not an option")
                self._add(key, value, origin, comments=False)
            except LineSyntaxError as exc:
                self.error(origin, f"--{key}={value}: {exc}")

    # -- pass 2: meaning ------------------------------------------------------------------------

    def build(self, main_file: str | None) -> Policy:
        b = _Builder(self, main_file)
        for line in self.lines:
            b.interpret(line)
        return b.finish()


_KEY_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.:_")
#: Keys whose value is a path, where ``~`` reads ``HOME``.
_PATH_KEYS = frozenset({"expose-ro", "expose-rw", "ignore", "learn"})


def _env_var_check(name: str) -> Callable[[str], str | None]:
    def check(ref: str) -> str | None:
        if is_var_name(ref):
            return None
        if "*" in ref and is_var_name(ref, pattern=True):
            if ref == name:
                return None
            return (
                f"'${{{ref}}}' is a pattern: it may only appear in the value of the same "
                f"pattern (env={ref}=${{{ref}}})"
            )
        return f"'${{{ref}' is not a valid variable name"

    return check


class _NotUtf8(ValueError):
    def __init__(self, line: int) -> None:
        super().__init__(f"not UTF-8 text (line {line})")
        self.line = line


#: A rule file larger than this is refused (a rule file is a few kilobytes; this keeps an
#: include of a huge or endless file from eating the machine).
MAX_RULE_FILE_BYTES = 4 * 1024 * 1024


def _read(path: str) -> str:
    """The text of a regular file. A FIFO or device is refused without blocking on it."""

    # O_NONBLOCK and O_CLOEXEC are POSIX's (Windows has neither, nor FIFOs to block on).
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb", closefd=True) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        data = handle.read(MAX_RULE_FILE_BYTES + 1)
    if len(data) > MAX_RULE_FILE_BYTES:
        raise ValueError(f"larger than {MAX_RULE_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _NotUtf8(data.count(b"\n", 0, exc.start) + 1) from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _fixed(pattern: str) -> int:
    return len(pattern) - pattern.count("*")


def globs_intersect(a: str, b: str) -> bool:
    """Whether two patterns where ``*`` is the only wildcard can match the same name."""

    from functools import cache

    @cache
    def go(i: int, j: int) -> bool:
        if i == len(a) and j == len(b):
            return True
        if i < len(a) and a[i] == "*":
            return go(i + 1, j) or (j < len(b) and go(i, j + 1))
        if j < len(b) and b[j] == "*":
            return go(i, j + 1) or (i < len(a) and go(i + 1, j))
        return i < len(a) and j < len(b) and a[i] == b[j] and go(i + 1, j + 1)

    return go(0, 0)


def env_canonical(rule: EnvRule) -> str:
    """A template for comparison: a value that is only the variable itself reads as ``<self>``."""

    if rule.template == "${" + rule.name + "}":
        return "\0self"
    return rule.template


class _Builder:
    def __init__(self, loader: Loader, main_file: str | None) -> None:
        self.ld = loader
        self.main_file = main_file
        self.singles: dict[str, list[RuleLine]] = {}
        self.lock_lines: list[RuleLine] = []
        self.env: list[EnvRule] = []
        self.unenv: list[NameRule] = []
        self.paths: dict[str, list[PathRule]] = {"expose-ro": [], "expose-rw": [], "ignore": []}
        self.imports: list[NameRule] = []
        self.api: list[ApiRule] = []
        self.net: list[NetRule] = []
        self.secrets: list[SecretRule] = []
        self.eval_lines: list[RuleLine] = []
        self.acknowledge: list[NameRule] = []
        self.provider_lines: list[RuleLine] = []

    def error(self, origin: Origin, message: str) -> None:
        self.ld.error(origin, message)

    def interpret(self, line: RuleLine) -> None:
        key, value, origin = line.key, line.value, line.origin
        try:
            if key in keys.SINGLE_KEYS:
                if key == "learn" and value.lower() == "false":
                    self.lock_lines.append(line)
                else:
                    self.singles.setdefault(key, []).append(line)
            elif key == "env":
                self._env(line)
            elif key == "secret":
                from pysandboxes.policy.netrules import parse_secret

                self.secrets.append(parse_secret(value, origin))
            elif key == "unenv":
                for name in _items(value, key):
                    if not is_var_name(name, pattern=True):
                        raise ValueError(f"bad variable name or pattern {name!r} in unenv=")
                    self.unenv.append(NameRule("unenv", name, origin))
            elif key in ("expose-ro", "expose-rw"):
                self._expose(key, value, origin)
            elif key == "ignore":
                self._ignore(value, origin)
            elif key == "python-import":
                for name in _items(value, key):
                    if name != "*" and not (name.isidentifier() and name.isascii()):
                        top = name.split(".")[0]
                        hint = f" (write the top-level name: {top})" if "." in name else ""
                        raise ValueError(f"bad module name {name!r} in python-import{hint}")
                    self.imports.append(NameRule("python-import", name, origin))
            elif key == "python-api":
                self._api(value, origin)
            elif key == "net":
                from pysandboxes.policy.netrules import parse_net

                self.net.append(parse_net(value, origin))
            elif key == "acknowledge":
                problems = []
                for name in _items(value, key):
                    message = keys.check_limit_id(name)
                    if message:
                        problems.append(message)
                    else:
                        self.acknowledge.append(NameRule("acknowledge", name, origin))
                if problems:
                    raise ValueError("; ".join(problems))
            elif keys.is_eval_key(key):
                _base, _profile, normal = keys.check_eval(key, value)
                self.eval_lines.append(RuleLine(key, normal, origin))
            elif "." in key and key.partition(".")[0] in PROVIDERS:
                self.provider_lines.append(line)
            else:
                raise ValueError(keys.suggest_key(key))
        except ValueError as exc:  # also UnicodeEncodeError of a path
            self.error(origin, str(exc))
        except OSError as exc:
            self.error(origin, f"{line.text}: {_reason(exc)}")

    # -- keys -------------------------------------------------------------------------------------

    def _env(self, line: RuleLine) -> None:
        name, _eq, template = line.value.partition("=")
        self.env.append(EnvRule(name, template, line.origin))

    def _expose(self, key: str, value: str, origin: Origin) -> None:
        if not value:
            if origin.learned or self.ld.learned_ok:  # e.g. ${VIRTUAL_ENV} unset on this run
                self.ld.warnings.append(f"{origin}: skipped: {key}= expands to no path")
                return
            names = self.ld.empty_vars.get((origin.file, origin.line))
            if names:
                unset = ", ".join(f"${{{name}}}" for name in names)
                raise ValueError(
                    f"{key}= needs a path: its value is {unset}, which is not set (or empty) "
                    "in python-sb's environment"
                )
            raise ValueError(f"{key}= needs a path")
        missing = self.ld.unset_in_path.get((origin.file, origin.line))
        if missing:
            shown = ", ".join(f"${{{name}}}" for name in missing)
            verb = "is" if len(missing) == 1 else "are"
            message = (
                f"{key}= is {value} because {shown} {verb} not set (or empty) in python-sb's "
                f"environment (write ${{{missing[0]}:-}} where an empty value is meant)"
            )
            if origin.learned or self.ld.learned_ok:
                self.ld.warnings.append(f"{origin}: skipped: {message}")
                return
            raise ValueError(message)
        path = self.ld.absolute(value)
        real = os.path.realpath(path)
        if not os.path.exists(real):
            message = f"{key}={value}: no such file or directory ({path})"
            if origin.learned or self.ld.learned_ok:
                self.ld.warnings.append(f"{origin}: skipped: {message}")
                return
            raise ValueError(message)
        self.paths[key].append(PathRule(key, real, origin, value))

    def _ignore(self, value: str, origin: Origin) -> None:
        pattern = value.rstrip("/") if value not in ("/", "") else value
        if not pattern or pattern == "/":
            raise ValueError("ignore= needs a file name or a glob, such as .env or *.pem")
        if "\0" in pattern:
            raise ValueError(f"a path cannot contain a NUL character: {pattern!r}")
        sep = self.ld.sep
        if self.ld.windows:
            from pysandboxes.policy.pathforms import FORMS

            pattern = pattern.rstrip("\\/") or pattern
            if ":" in pattern or "\\" in pattern or "/" in pattern or pattern.startswith("~"):
                pattern = _resolve_glob_prefix(self.ld.absolute(pattern), sep)  # a path
            else:  # a name: the forms Windows would not keep are refused all the same
                reason = FORMS.problem(pattern)
                if reason is not None:
                    raise ValueError(f"ignore={value}: {reason}")
        elif "/" in pattern or pattern.startswith("~"):
            pattern = _resolve_glob_prefix(self.ld.absolute(pattern))
        import re

        from pysandboxes.policy.decide import glob_regex

        try:
            re.compile(glob_regex(pattern, sep))
        except re.error as exc:
            raise ValueError(f"ignore={value}: bad glob ({exc.msg})") from None
        self.paths["ignore"].append(PathRule("ignore", pattern, origin, value))

    def _api(self, value: str, origin: Origin) -> None:
        action, colon, targets = value.partition(":")
        if not colon or action.upper() not in ("ALLOW", "DENY"):
            raise ValueError(
                f"python-api={value}: expected ALLOW:target[,target] or DENY:target[,target]"
            )
        act: Any = action.upper()
        problems = []
        for target in _items(targets, "python-api"):
            message = keys.check_api_target(target)
            if message:
                problems.append(message)
            else:
                self.api.append(ApiRule(act, target, origin))
        if problems:
            raise ValueError("; ".join(problems))

    # -- finishing --------------------------------------------------------------------------------

    def _single(self, key: str) -> RuleLine | None:
        """The effective line of a single key (``<arg>`` wins); duplicates are problems."""

        found = self.singles.get(key, [])
        in_files = [line for line in found if not line.origin.is_arg]
        in_args = [line for line in found if line.origin.is_arg]
        for group, where in ((in_files, "the rule files"), (in_args, "the command line")):
            for extra in group[1:]:
                self.error(
                    extra.origin,
                    f"{key} is single-valued and already set in {where} at "
                    f"{group[0].origin} ({group[0].text})",
                )
        if in_args:
            return in_args[0]
        return in_files[0] if in_files else None

    def _settings(self) -> dict[str, Setting]:
        out: dict[str, Setting] = {}
        line = self._single("py-sandbox")
        if line is not None:
            if line.value.lower() in ("true", "false"):
                out["py_sandbox"] = Setting(line.value.lower() == "true", line.origin)
            else:
                self.error(line.origin, f"py-sandbox={line.value}: expected true or false")
        line = self._single("os-sandbox")
        if line is not None:
            if line.value in PROVIDERS:
                out["os_sandbox"] = Setting(line.value, line.origin)
            else:
                near = keys.suggest(line.value, list(PROVIDERS))
                self.error(
                    line.origin,
                    f"os-sandbox={line.value}: unknown provider"
                    + (f" (did you mean {near}?)" if near else "")
                    + f"; expected one of {', '.join(PROVIDERS)}",
                )
        line = self._single("learn")
        if line is not None:
            if line.value in ("", "true"):
                if self.main_file is None:
                    self.error(line.origin, "learn= without a file name needs a rule file")
                else:
                    out["learn"] = Setting(self.main_file, line.origin)
            else:
                try:
                    out["learn"] = Setting(self.ld.absolute(line.value), line.origin)
                except ValueError as exc:
                    self.error(line.origin, f"{line.text}: {exc}")
        return out

    def _eval_and_provider(self, provider: str) -> tuple[list[RuleLine], list[RuleLine]]:
        evals: list[RuleLine] = []
        singles: dict[str, list[RuleLine]] = {}
        for line in self.eval_lines:
            if line.key.partition(":")[0] in keys.EVAL_SINGLE_KEYS:
                singles.setdefault(line.key, []).append(line)
            else:
                evals.append(line)
        params: list[RuleLine] = []
        for line in self.provider_lines:
            name, _dot, param = line.key.partition(".")
            if name != provider:
                continue  # another provider's key: ignored (SPEC §2.2)
            try:
                value = keys.check_provider_param(name, param, line.value)
                if line.key in keys.PATH_PARAMS:
                    value = self.ld.absolute(value)
            except ValueError as exc:
                self.error(line.origin, f"{line.text}: {exc}")
                continue
            singles.setdefault(line.key, []).append(RuleLine(line.key, value, line.origin))
        self.singles.update(singles)
        for key in singles:
            chosen = self._single(key)
            if chosen is None:
                continue
            if key.partition(":")[0] in keys.EVAL_SINGLE_KEYS:
                evals.append(chosen)
            else:
                params.append(chosen)
        evals.sort(key=lambda ln: ln.origin.sort_key)
        params.sort(key=lambda ln: ln.origin.sort_key)
        return evals, params

    def _check_env(self) -> None:
        exact: dict[str, EnvRule] = {}
        patterns: list[EnvRule] = []
        for rule in self.env:
            if not rule.is_pattern:
                first = exact.setdefault(rule.name, rule)
                if first is not rule and first.template != rule.template:
                    self.error(
                        rule.origin,
                        f"{rule.text} conflicts with {first.text} at {first.origin}: "
                        "one variable, two values",
                    )
                continue
            for other in patterns:
                if (
                    _fixed(other.name) == _fixed(rule.name)
                    and env_canonical(other) != env_canonical(rule)
                    and globs_intersect(other.name, rule.name)
                ):
                    self.error(
                        rule.origin,
                        f"{rule.text} and {other.text} at {other.origin} are equally specific "
                        "patterns that give different values to the same names",
                    )
            patterns.append(rule)

    def _check_lock(self) -> Origin | None:
        file_locks = [ln for ln in self.lock_lines if not ln.origin.is_arg]
        candidates = file_locks or self.lock_lines
        if not candidates:
            return None
        lock = candidates[0]
        if not file_locks:
            return lock.origin
        reason = f"the configuration is locked by learn=false at {lock.origin}"
        for line in self.ld.lines:
            if line.origin.is_arg:
                self.error(line.origin, f"rule {line.text!r} refused: {reason}")
            elif line.key == "learn" and line.value.lower() != "false":
                self.error(line.origin, f"{line.text} (learning) refused: {reason}")
        return lock.origin

    def finish(self) -> Policy:
        settings = self._settings()
        provider = settings.get("os_sandbox", Policy().os_sandbox).value
        evals, params = self._eval_and_provider(provider)
        self._check_env()
        dynamic = [r for r in self.api if r.target == "dynamic-code" and r.action == "ALLOW"]
        if dynamic and evals:
            self.error(
                dynamic[0].origin,
                f"{dynamic[0].text} (unguarded eval/exec) cannot be combined with eval-* rules "
                f"({evals[0].text} at {evals[0].origin})",
            )
        lock = self._check_lock()
        if self.ld.problems:
            raise ConfigError(self.ld.problems)
        return Policy(
            **settings,
            lock=lock,
            env=tuple(self.env),
            unenv=tuple(self.unenv),
            expose_ro=tuple(self.paths["expose-ro"]),
            expose_rw=tuple(self.paths["expose-rw"]),
            ignore=tuple(self.paths["ignore"]),
            python_import=tuple(self.imports),
            python_api=tuple(self.api),
            net=tuple(self.net),
            secrets=tuple(self.secrets),
            eval_rules=tuple(evals),
            acknowledge=tuple(self.acknowledge),
            provider_params=tuple(params),
            rule_files=tuple(self.ld.rule_files),
            main_file=self.main_file,
            includes=tuple(self.ld.includes),
            lines=tuple(self.ld.lines),
            warnings=tuple(self.ld.warnings),
        )


def _items(value: str, key: str) -> list[str]:
    items = [item.strip() for item in value.split(",")]
    if any(not item for item in items):
        raise ValueError(f"{key}={value}: empty item in the comma-separated list")
    return items


def _resolve_glob_prefix(pattern: str, sep: str = "/") -> str:
    """Resolve symlinks in the part of an absolute glob before its first wildcard component
    (``sep``: ``\\`` for Windows paths, resolved by the platform's own ``realpath`` on
    Windows; elsewhere -- the unit tests of the Windows forms -- kept as normalised)."""

    if sep != "/" and sys.platform != "win32":
        return pattern

    parts = pattern.split(sep)
    for index, part in enumerate(parts):
        if any(c in _GLOB_CHARS for c in part):
            head = sep.join(parts[:index]) or sep
            if sep != "/" and head.endswith(":"):
                head += sep  # a drive's root
            real = os.path.realpath(head)
            rest = sep.join(parts[index:])
            return (real.rstrip(sep) + sep + rest) if rest else real
    return os.path.realpath(pattern)


def variables_read(
    path: str, *, environ: Mapping[str, str] | None = None, cwd: str | None = None
) -> dict[str, str]:
    """The environment variables the rule file ``path`` and its includes read, each with the
    origin of the first line that reads it (``{"OS_SANDBOX": ".py-sandboxes(3)"}``).

    A run's rules change with these variables: ``OS_SANDBOX=none python-sb x.py`` under
    ``os-sandbox=${OS_SANDBOX:-landlock}``, ``HOME=/tmp/x`` under a ``~/...`` include. The
    record is made while the files are read, before the rules are interpreted, so a file whose
    rules are refused still gives it. ``--explain`` shows it; the coding-agent hook refuses a
    command that sets one of them. Patterns of ``env=PAT_*=${PAT_*}`` are recorded as written.
    """

    loader = Loader(os.environ if environ is None else environ, cwd or os.getcwd())
    try:
        main_file = loader.absolute(path)
    except ValueError:
        return {}
    loader.read_main(main_file)
    return dict(loader.variables)


def load(
    path: str | None,
    *,
    cli_rules: Sequence[tuple[str, str]] = (),
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    learned_ok: bool = False,
    text: str | None = None,
) -> Policy:
    """See :func:`pysandboxes.policy.load_policy`."""

    if cwd is None:
        cwd = os.getcwd()
    loader = Loader(os.environ if environ is None else environ, cwd, learned_ok)
    main_file = None
    if path is not None:
        try:
            main_file = loader.absolute(path)
        except ValueError as exc:
            raise ConfigError([ConfigProblem(repr(path), f"bad rule file path: {exc}")]) from None
        loader.read_main(main_file, text)
    loader.add_cli(cli_rules)
    return loader.build(main_file)
