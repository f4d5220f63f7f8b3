"""Turn the accesses of one run into rule lines a person can review (SPEC §4).

Pure functions over a :class:`~pysandboxes.learn.records.Recording` and a :class:`LearnContext`
(where the run happened: current directory, home, virtual environment, temp directories, what the
defaults already grant, and the rules the output file already has, compared by meaning through
:mod:`pysandboxes.policy.decide`). Nothing here touches the disk except ``os.path.isdir`` on
recorded paths.

How each kind is generalised (docs/learning.md says the same for users):

- **Files** become directories: a file read grants its directory read-only, a file written
  grants its directory read-write; a directory listed is granted itself. A directory that is too
  broad to grant whole (``/``, a top-level system directory, ``/usr/*``, ``/var/*``, the home
  directory, the host temp directory) is never granted from one file: the file alone is.
  Paths are written as ``${VIRTUAL_ENV}/...``, ``${TMPDIR:-/tmp}/...``, ``./...`` or ``~/...``
  (the longest base that applies) or absolute. A directory already covered by a wider one with
  at least the same rights is dropped. Skipped: what the defaults grant (the interpreter's
  installation and site directories, certificate stores, ``/dev/null``, ``/dev/zero``,
  ``/dev/urandom``, ``/dev/random``, the private temp directory), byte-code caches written by
  the import system (anything in ``__pycache__``; the import system ignores a refused cache
  write), and what the output file already grants. The script's own directory is always
  granted read-only; for ``-m``, the ``sys.path`` entry that holds the top-level package
  (:func:`program_directories`). A rule for a place that holds credentials (``~/.aws``,
  ``~/.netrc``, ``*.key``: :func:`pysandboxes.learn.secrets.looks_secret_path`) is written
  commented out under a review note, never granted.
- **Network**: one line per protocol, host, direction, with the ports as a comma list. The host
  is the name the program used when it used one, else the address. A bind to port 0 (the kernel
  picks a port) is written with port ``0``. A loopback connection to the program's own server
  is not recorded (it belongs to the bind's IN grant): such a program gets its IN line alone.
- **Modules**: top-level names, in three commented groups: modules that reach outside the
  interpreter (:data:`DANGEROUS_MODULES`), the standard library (``sys.stdlib_module_names``),
  and the rest (third-party packages and the program's own modules). The guard records an
  import only once its module loaded, so every recorded name is written (a probe never is).
- **Environment**: ``env=NAME=${NAME}`` for each variable read by name (:func:`env_verdict`,
  which audit uses too); a scan of the whole environment grants nothing (a note says so); a
  name that looks like a secret (:mod:`pysandboxes.learn.secrets`) is written commented out
  under a review note; one that was not set during the run is written commented out, for the
  reviewer, and not granted. ``TMPDIR``, ``TEMP`` and ``TMP`` are never learned (the launcher
  points ``TMPDIR`` at the private temp directory); ``PYTHON*`` variables, which act on the
  interpreter before the Python layer is armed, are left to the user with a warning.
- **Sensitive calls**: ``python-api=ALLOW:function  # category``, by function (never a whole
  category, which would grant more than the run used).
- **Dynamic code**: the ``eval-*`` items the guard reported, one line per key.

Any value that would read back differently (``#``, ``$``, quotes, control characters, blanks at
either end) is skipped with a warning (:mod:`pysandboxes.learn.values`).
"""

from __future__ import annotations

import fnmatch
import functools
import ipaddress
import os
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from pysandboxes.learn.records import (
    UNGUARDED_KEY,
    ApiAccess,
    EnvAccess,
    EnvScan,
    EvalAccess,
    FileAccess,
    ImportAccess,
    ImportListing,
    ModuleRoot,
    NetAccess,
    Recording,
)
from pysandboxes.learn.secrets import looks_secret, looks_secret_path
from pysandboxes.learn.values import is_env_name, is_module_name, shown, unsafe_reason
from pysandboxes.policy.model import Policy

#: Section names of the learned block, in the order they are written. The template of a new rule
#: file (``pysandboxes.policy.template``) has one marked place per section.
SECTIONS: tuple[str, ...] = ("files", "network", "imports", "environment", "api", "eval")

#: Modules grouped first, under a comment asking for review: each one is a way out of the
#: interpreter's own world — native code, other processes, the network, deserialisation of
#: objects, or running code built at run time. The ``python-api`` rules still govern their
#: sensitive functions; the group is there so that a reviewer sees them at a glance.
DANGEROUS_MODULES: frozenset[str] = frozenset(
    {
        # native code and raw memory
        "ctypes",
        "_ctypes",
        "cffi",
        "mmap",
        # other processes and the terminal
        "subprocess",
        "_posixsubprocess",
        "multiprocessing",
        "_multiprocessing",
        "concurrent",
        "pty",
        "signal",
        "resource",
        "fcntl",
        "termios",
        # the network
        "socket",
        "_socket",
        "ssl",
        "_ssl",
        "socketserver",
        "http",
        "urllib",
        "ftplib",
        "smtplib",
        "poplib",
        "imaplib",
        "telnetlib",
        "xmlrpc",
        "asyncio",
        "selectors",
        "select",
        "webbrowser",
        # deserialisation of arbitrary objects
        "pickle",
        "_pickle",
        "marshal",
        "shelve",
        "copyreg",
        "dill",
        "cloudpickle",
        # code built or loaded at run time, introspection of the interpreter
        "code",
        "codeop",
        "runpy",
        "importlib",
        "zipimport",
        "pkgutil",
        "gc",
        "inspect",
        "_thread",
    }
)

#: Directories below which one file never grants its whole directory (see module docstring).
_BROAD_PARENTS: tuple[str, ...] = ("/usr", "/var", "/run/user", "/home")

#: Directories of the home directory shared by many programs (never granted from one file).
_BROAD_IN_HOME: tuple[str, ...] = (".config", ".cache", ".local", ".local/share")

_WRAP = 96  # width of a wrapped ``python-import=`` line


@dataclass(frozen=True)
class LearnContext:
    """Where the learning run happened, and what needs no rule.

    ``existing`` holds the rules already in the output file (only that file's own lines, so that
    a rule granted by an included user profile is still written: the file must work elsewhere).
    """

    cwd: str
    home: str | None = None
    virtual_env: str | None = None
    host_tmp: str = "/tmp"
    private_tmp: str | None = None
    default_grants: tuple[str, ...] = ()
    program_kind: str = "script"
    program: str | None = None
    existing: Policy | None = None
    host_env: frozenset[str] | None = None  # variable names set when learning; None: unknown
    existing_lines: frozenset[str] = frozenset()  # the output file's lines, stripped
    #: The learned file sits in the script's own directory, where python-sb finds it whatever
    #: the current directory: the script's directory is then not written relative to it.
    output_beside_script: bool = False

    @classmethod
    def for_run(
        cls,
        *,
        cwd: str,
        program_kind: str = "script",
        program: str | None = None,
        private_tmp: str | None = None,
        prefixes: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
        existing: Policy | None = None,
        existing_text: str = "",
        output: str | None = None,
    ) -> LearnContext:
        """The context of a run on this machine, with this interpreter's default grants."""

        env = os.environ if environ is None else environ
        home = env.get("HOME") or os.path.expanduser("~")
        return cls(
            cwd=cwd,
            home=home if home and home != "/" else None,
            virtual_env=env.get("VIRTUAL_ENV") or None,
            host_tmp=env.get("TMPDIR") or "/tmp",
            private_tmp=private_tmp,
            default_grants=tuple(default_grants(prefixes)),
            program_kind=program_kind,
            program=program,
            existing=existing,
            host_env=frozenset(env),
            existing_lines=frozenset(line.strip() for line in existing_text.splitlines()),
            output_beside_script=_beside_script(output, cwd, program_kind, program),
        )


def _beside_script(output: str | None, cwd: str, program_kind: str, program: str | None) -> bool:
    if not output or program_kind != "script" or not program:
        return False
    script = os.path.realpath(os.path.join(cwd, program))
    folder = script if os.path.isdir(script) else os.path.dirname(script)
    return os.path.dirname(os.path.realpath(os.path.join(cwd, output))) == folder


def default_grants(extra: Iterable[str] = ()) -> list[str]:
    """What every run may use without a rule: this interpreter's installation, its site
    directories, and the guard's default grants (certificate stores, time-zone data, the
    default devices; SPEC §3.1)."""

    found: list[str] = []
    for prefix in (*extra, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        found += _narrowed(prefix)
    paths = sysconfig.get_paths()
    found += [paths[n] for n in ("stdlib", "platstdlib", "purelib", "platlib") if n in paths]
    found += [p for p in sys.path if p and os.path.isdir(p) and p.endswith(_SITE_DIRS)]
    from pysandboxes.guard import files as guard_files  # the guard's own list of defaults

    found += [
        *guard_files.CERTIFICATE_STORES,
        *guard_files.SYSTEM_DATA,
        *guard_files.DEVICES_RW,
        *guard_files.DEVICES_RO,
    ]
    out: list[str] = []
    for path in found:
        for variant in (os.path.normpath(path), os.path.realpath(path)):
            if variant not in out:
                out.append(variant)
    return out


_SITE_DIRS = ("site-packages", "dist-packages")

#: Prefixes shared with the whole system (a distribution's Python): only its Python directories
#: count as the interpreter's, as the kernel providers grant them. Skipping all of ``/usr`` here
#: would leave out a rule that a kernel provider then needs.
_SHARED_PREFIXES = frozenset({"/", "/usr", "/usr/local"})


def _narrowed(prefix: str) -> list[str]:
    """``prefix``, or, for a shared prefix such as ``/usr``, its Python directories only."""

    if os.path.normpath(prefix) not in _SHARED_PREFIXES:
        return [prefix]
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    base = "/usr" if os.path.normpath(prefix) == "/" else os.path.normpath(prefix)
    return [
        os.path.join(base, "lib", version),
        os.path.join(base, "lib64", version),
        os.path.join(base, "lib", f"python{sys.version_info[0]}"),
        os.path.join(base, "local", "lib", version),
    ]


#: Keys learning mode never writes (issue 32: ``secret=`` is a human's decision, SPEC §2.2).
NEVER_LEARNED = frozenset({"secret"})


@dataclass
class Learned:
    """Rule lines per section (comment lines included), and the warnings to print."""

    sections: dict[str, list[str]] = field(default_factory=dict)
    rules: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Commented-out lines a person must decide on (secrets read by name): written even when
    #: no rule is, so that the decision is in the file.
    reviews: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.rules and not self.reviews

    def add(self, section: str, key: str, value: str, comment: str | None = None) -> None:
        if key in NEVER_LEARNED:
            # issue 32: who may receive a real credential is never inferred from a run.
            raise ValueError(f"learning never writes {key}= lines")
        line = f"{key}={value}" + (f"  # {comment}" if comment else "")
        self.sections.setdefault(section, []).append(line)
        self.rules.append((key, value))

    def note(self, section: str, comment: str) -> None:
        self.sections.setdefault(section, []).append(f"# {comment}")


def generalize(recording: Recording, ctx: LearnContext) -> Learned:
    """The rule lines that grant what ``recording`` shows, minus what needs no rule."""

    learned = Learned()
    _files(recording, ctx, learned)
    _network(recording, ctx, learned)
    _imports(recording, ctx, learned)
    _environment(recording, ctx, learned)
    _api(recording, ctx, learned)
    _eval(recording, ctx, learned)
    _check_with_the_parser(learned, ctx)
    return learned


def _check_with_the_parser(learned: Learned, ctx: LearnContext) -> None:
    """Drop, with a warning, any line the rule parser would refuse (a host name the grammar does
    not accept, a value only the parser knows to be wrong): the written file must always load."""

    from pysandboxes.errors import ConfigError
    from pysandboxes.policy import parse_text

    environ = {"HOME": ctx.home or "/", "TMPDIR": ctx.host_tmp}
    if ctx.virtual_env:
        environ["VIRTUAL_ENV"] = ctx.virtual_env
    check_file = os.path.join(ctx.cwd, ".py-sandboxes")
    for section, lines in learned.sections.items():
        kept: list[str] = []
        for line in lines:
            if not line.startswith("#"):
                try:
                    parse_text(
                        line + "\n", check_file, environ=environ, cwd=ctx.cwd, learned_ok=True
                    )
                except ConfigError as exc:
                    reason = exc.problems[0].message if exc.problems else str(exc)
                    learned.warnings.append(f"skipped {line!r}: {reason}")
                    key, _, value = line.split("  #", 1)[0].partition("=")
                    if (key, value) in learned.rules:
                        learned.rules.remove((key, value))
                    continue
            kept.append(line)
        learned.sections[section] = kept


# -- paths ----------------------------------------------------------------------------------------


def _variants(path: str | None) -> list[str]:
    if not path:
        return []
    norm = os.path.normpath(path)
    real = os.path.realpath(norm)
    return [norm] if real == norm else [norm, real]


@functools.lru_cache(maxsize=16)
def _broad_set(home: str | None, host_tmp: str) -> frozenset[str]:
    broad = [*_variants(home), *_variants(host_tmp)]
    for base in _variants(home):
        broad += [os.path.dirname(base)]
        broad += [os.path.join(base, sub) for sub in _BROAD_IN_HOME]
    return frozenset(broad)


def is_broad(directory: str, ctx: LearnContext) -> bool:
    """True for a directory too wide to grant because one file in it was used."""

    directory = os.path.normpath(directory)
    if directory == "/" or directory.count("/") == 1:
        return True
    if os.path.dirname(directory) in _BROAD_PARENTS:
        return True
    return directory in _broad_set(ctx.home, ctx.host_tmp)


@functools.lru_cache(maxsize=16)
def _grant_bases(default_grants: tuple[str, ...], private_tmp: str | None) -> tuple[str, ...]:
    """The default-granted prefixes, normalised, each with a trailing ``/``."""

    bases = {os.path.normpath(b) for b in (*default_grants, *_variants(private_tmp))}
    return tuple(sorted(b.rstrip("/") + "/" for b in bases))


def is_default_grant(path: str, ctx: LearnContext, write: bool = False) -> bool:
    """True when the defaults already allow ``path`` (no rule needed) for that access.

    Writing is granted by default only in the private temp directory and to the writable
    devices (``/dev/null``...); a write below the interpreter's installation (a ``pip install``
    into the environment) is refused by the guard and reported by audit, so it is learned too.
    """

    if not write:
        return (path + "/").startswith(_grant_bases(ctx.default_grants, ctx.private_tmp))
    return (path + "/").startswith(_grant_bases(_writable_defaults(), ctx.private_tmp))


@functools.lru_cache(maxsize=1)
def _writable_defaults() -> tuple[str, ...]:
    from pysandboxes.guard import files as guard_files  # the guard's own list of defaults

    return tuple(guard_files.DEVICES_RW)


@functools.lru_cache(maxsize=16)
def _form_bases(
    virtual_env: str | None, host_tmp: str, cwd: str, home: str | None
) -> tuple[tuple[str, str], ...]:
    """``(base, prefix)`` pairs, longest base first (the longest one that applies wins)."""

    candidates: list[tuple[str, str]] = []
    for base in _variants(virtual_env):
        candidates.append((base, "${VIRTUAL_ENV}"))
    for base in _variants(host_tmp):
        candidates.append((base, "${TMPDIR:-/tmp}"))
    for base in _variants(cwd):
        candidates.append((base, "."))
    for base in _variants(home):
        candidates.append((base, "~"))
    kept = [(base, prefix) for base, prefix in candidates if base != "/"]
    return tuple(sorted(kept, key=lambda item: -len(item[0])))


def written_form(path: str, ctx: LearnContext) -> tuple[str, str]:
    """``(prefix, rest)``: ``path`` as a rule writes it, with the longest base that applies.

    ``prefix`` is ``${VIRTUAL_ENV}``, ``${TMPDIR:-/tmp}``, ``.``, ``~`` or ``""`` (absolute, in
    which case ``rest`` is the whole path). Only ``rest`` comes from the program, so only ``rest``
    is checked for characters the rule syntax would read differently.
    """

    for base, prefix in _form_bases(ctx.virtual_env, ctx.host_tmp, ctx.cwd, ctx.home):
        if path == base:
            return prefix, ""
        if path.startswith(base + "/"):
            return prefix, path[len(base) + 1 :]
    return "", path


def render_path(path: str, ctx: LearnContext) -> tuple[str | None, str | None]:
    """``(value, None)`` for a writable rule value, or ``(None, why)`` when it must be skipped."""

    prefix, rest = written_form(path, ctx)
    if rest:
        why = unsafe_reason(rest)
        if why is not None:
            return None, why
        return (f"{prefix}/{rest}" if prefix else rest), None
    return prefix, None


def _is_bytecode_cache(path: str) -> bool:
    """A ``__pycache__`` directory or anything in it (``.pyc`` files and their temp names)."""

    return "__pycache__" in path.split("/")


def _existing_mode(path: str, ctx: LearnContext) -> str | None:
    """``rw``/``ro``/``ignored``/``None``: what the output file's own rules give ``path``."""

    if ctx.existing is None:
        return None
    from pysandboxes.policy.decide import path_access

    return path_access(ctx.existing, path)


def _grant_for(access: FileAccess, ctx: LearnContext) -> tuple[str, bool]:
    """The directory (or, inside a broad directory, the file) that grants ``access``."""

    path = os.path.normpath(os.path.join(ctx.cwd, access.path))
    parent = os.path.dirname(path)
    if os.path.isdir(path) and not is_broad(path, ctx):
        if access.write and not is_broad(parent, ctx) and parent != path:
            # A change of the directory's own entry (os.mkdir, makedirs, rmdir, rename): a
            # change of the directory that holds it. On a fresh run the directory does not
            # exist yet, and a rule naming a missing path is refused (issue 26): only the
            # parent's rule lets the program create it again.
            return parent, True
        # A directory listed (read), or created in a broad place (~, /tmp): the directory.
        return path, access.write
    if is_broad(parent, ctx):
        return path, access.write
    return parent, access.write


def program_directories(ctx: LearnContext) -> list[str]:
    """The directory the interpreter must read to start the program at all.

    For a script, its own directory (``sys.path[0]``: CPython reads the script there, and the
    import system lists it for the script's sibling modules). For ``-m pkg.mod``, the
    ``sys.path`` entry that holds the top-level package (the current directory for a package of
    the project): the import system finds a module by listing that directory, which a kernel
    provider refuses unless it is exposed.
    """

    if not ctx.program:
        return []
    if ctx.program_kind == "script":
        script = os.path.realpath(os.path.join(ctx.cwd, ctx.program))
        return [script if os.path.isdir(script) else os.path.dirname(script)]
    if ctx.program_kind == "module":
        from importlib.machinery import PathFinder

        top = ctx.program.partition(".")[0]
        try:
            spec = PathFinder.find_spec(top, [ctx.cwd, *sys.path[1:]])
        except (ImportError, ValueError, OSError):
            return []
        if spec is None:
            return []
        if spec.submodule_search_locations:
            return [os.path.dirname(os.path.normpath(next(iter(spec.submodule_search_locations))))]
        if spec.origin and os.path.isabs(spec.origin):
            return [os.path.dirname(spec.origin)]
    return []


def listing_needed(listing: ImportListing, recording: Recording) -> bool:
    """Whether the import system's listing of a ``sys.path`` directory is needed: a module of
    the run was found there. (It lists every such directory on every import: for ``-c`` and
    ``-m`` the current directory, which a run that imports nothing from it does not need.)
    Learning writes it, and audit reports it, only then."""

    path = os.path.normpath(listing.path)
    roots = _module_roots(recording)
    return path in roots or os.path.realpath(path) in roots


def _module_roots(recording: Recording) -> frozenset[str]:
    found: set[str] = set()
    for root in recording.of_type(ModuleRoot):
        path = os.path.normpath(root.path)
        found.update((path, os.path.realpath(path)))
    return frozenset(found)


def file_grant_looks_secret(path: str, write: bool, ctx: LearnContext) -> bool:
    """Whether the rule learning would write for this file access is left for review (a
    place that holds credentials); audit says "looks like a secret" for the same accesses."""

    grant, _ = _grant_for(FileAccess(path, write), ctx)
    return looks_secret_path(grant)


def program_needs(ctx: LearnContext) -> list[str]:
    """The :func:`program_directories` that neither the defaults nor ``ctx.existing`` grant
    for reading: what learning writes for them, and what audit reports."""

    return [
        directory
        for directory in program_directories(ctx)
        if not is_default_grant(directory, ctx) and _existing_mode(directory, ctx) not in RO_OR_RW
    ]


RO_OR_RW = ("ro", "rw")


def _files(recording: Recording, ctx: LearnContext, learned: Learned) -> None:
    wanted: dict[str, bool] = {}  # directory -> writable

    def want(path: str, write: bool) -> None:
        if is_default_grant(path, ctx, write):
            return
        have = _existing_mode(path, ctx)
        if have == "rw" or (have == "ro" and not write):
            return
        wanted[path] = wanted.get(path, False) or write

    hidden: set[str] = set()
    own = set(program_needs(ctx)) if ctx.output_beside_script else set()
    for directory in program_needs(ctx):
        want(directory, False)
    for listing in recording.of_type(ImportListing):
        if listing_needed(listing, recording):
            want(os.path.normpath(os.path.join(ctx.cwd, listing.path)), False)
    for access in recording.of_type(FileAccess):
        if access.path.startswith("@"):  # an abstract Unix socket: no file rule names it
            learned.warnings.append(
                f"not granting the abstract Unix socket {shown(access.path)}: no rule can"
            )
            continue
        path = os.path.normpath(os.path.join(ctx.cwd, access.path))
        if access.write and _is_bytecode_cache(path):
            continue
        if is_default_grant(path, ctx, access.write):
            continue
        have = _existing_mode(path, ctx)
        if have == "rw" or (have == "ro" and not access.write):
            continue
        if have == "ignored":
            hidden.add(path)
            continue
        grant, write = _grant_for(access, ctx)
        want(grant, write)

    for path in sorted(hidden):
        learned.warnings.append(
            f"not granting {shown(path)}: an ignore= rule of the file hides it, whatever exposes it"
        )
    kept: list[tuple[str, bool]] = []
    for path in sorted(wanted):
        write = wanted[path]
        covered = False
        parent, child = os.path.dirname(path), path
        while parent != child:  # a wider directory with at least the same rights covers it
            if parent in wanted and (wanted[parent] or not write):
                covered = True
                break
            parent, child = os.path.dirname(parent), parent
        if not covered:
            kept.append((path, write))
    lines: list[tuple[str, str]] = []
    secrets: list[str] = []
    # A script's own directory below home, and what lies below it (its out/, data/), when the
    # learned file sits beside the script (found there whatever the current directory), is
    # written as ~/..., not relative to the directory learning ran from (issue 26: a skill
    # learned from inside its scripts/ got "expose-ro=." or "expose-rw=./out" and failed when
    # run from elsewhere). Elsewhere the usual forms stay (a project's ./ keeps the checkout
    # movable).
    anywhere = replace(ctx, cwd="/", host_tmp="/", virtual_env=None)
    for path, write in kept:
        value, why = render_path(path, ctx)
        if any(path == d or path.startswith(d.rstrip("/") + "/") for d in own):
            home_form, _ = render_path(path, anywhere)
            if home_form is not None and home_form.startswith("~"):
                value = home_form
        key = "expose-rw" if write else "expose-ro"
        if value is None:
            learned.warnings.append(f"skipped {key} for {shown(path)}: {why}")
            continue
        if looks_secret_path(path):
            secrets.append(f"{key}={value}")  # credentials: left to a person (docs/learning.md)
            continue
        lines.append((value, key))
    for value, key in sorted(lines):
        learned.add("files", key, value)
    fresh = [line for line in sorted(secrets) if f"# {line}" not in ctx.existing_lines]
    if fresh:
        learned.warnings.append(
            "not granting " + ", ".join(fresh) + ": the program read it, but it looks like a "
            "place that holds credentials; the line is written commented out, uncomment it if "
            "the program needs it"
        )
        learned.note("files", "Review: secret. The program read these, but they look like places")
        learned.note("files", "that hold credentials (keys, tokens, passwords), so they are NOT")
        learned.note("files", "granted. Uncomment a line only if the program must read them:")
        for line in fresh:
            learned.note("files", line)
            learned.reviews.append(line)


# -- network --------------------------------------------------------------------------------------


def _plain_ip(ip: str) -> str:
    try:
        address = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def _net_existing(access: NetAccess, host: str, ctx: LearnContext) -> tuple[str | None, str]:
    """What the output file's own ``net=`` rules say of ``access``: ``("ALLOW", rule)``,
    ``("DENY", where)`` (a DENY wins whatever the order, SPEC §2.4) or ``(None, "")``."""

    if ctx.existing is None:
        return None, ""
    from pysandboxes.policy.decide import net_decision

    name = access.host.lower() if access.host else None
    allowed, rule = net_decision(
        ctx.existing,
        access.proto,
        name,
        _plain_ip(access.ip) if access.ip else "",
        access.port,
        access.direction,
    )
    if allowed:
        return "ALLOW", rule.text if rule else ""
    if rule is not None:
        return "DENY", f"{rule.text} in {rule.origin}"
    return None, ""


def _format_ports(ports: set[int], ranges: set[tuple[int, int]]) -> str:
    items = [(p, p) for p in sorted(ports) if not any(lo <= p <= hi for lo, hi in ranges)]
    items += sorted(ranges)
    items.sort()
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in items)


def _network(recording: Recording, ctx: LearnContext, learned: Learned) -> None:
    """``net=`` lines from the connections, datagrams, binds and listens of the run.

    A loopback connection to the program's own server (a socket it bound and holds alone) is
    never recorded: the guard counts it as part of the IN grant of the bind (SPEC §2.4,
    docs/network.md), under every enforcer, so the bind's ``IN`` line is all such a program
    needs, whatever port the kernel chose."""

    accesses: list[NetAccess] = recording.of_type(NetAccess)
    ports: dict[tuple[str, str, str], set[int]] = {}
    for access in accesses:
        host = (access.host or "").lower().removesuffix(".") or _plain_ip(access.ip)
        verdict, rule = _net_existing(access, host, ctx)
        if verdict == "ALLOW":
            continue
        if verdict == "DENY":
            learned.warnings.append(
                f"not granting {access.proto} {access.direction} {host} port {access.port}: "
                f"{rule} denies it, and a DENY wins over any ALLOW"
            )
            continue
        why = unsafe_reason(host, extra="|,")
        if why is None and (host.endswith(".") or ".." in host):
            why = "it has an empty label, which no rule can name"
        if why is not None:
            learned.warnings.append(f"skipped net rule for host {shown(host)}: {why}")
            continue
        ports.setdefault((access.proto, host, access.direction), set()).add(access.port)
    for key in sorted(ports):
        proto, host, direction = key
        found = ports[key]
        comment = None
        if direction == "IN" and 0 in found:
            # A bind to port 0: "a port the kernel picks", which every enforcer reads as such
            # (the guard judges the bind with port 0, Landlock's bind rule for port 0 means the
            # ephemeral ports, the namespace providers forward nothing for it); "*" would be
            # every port, which bwrap and unshare refuse to forward from the host.
            text = _format_ports(found, set())
            comment = "port 0: chosen by the kernel"
        elif found == {0}:
            # A name looked up without a port.
            text = "*"
            comment = "looked up, no port"
        else:
            text = _format_ports(found - {0}, set())
        learned.add("network", "net", f"ALLOW|{proto}|{host}|{text}|{direction}", comment)


# -- modules --------------------------------------------------------------------------------------


def _import_allowed(name: str, ctx: LearnContext) -> bool:
    if ctx.existing is None:
        return False
    from pysandboxes.policy.decide import import_allowed

    return import_allowed(ctx.existing, name)


def wrap_names(key: str, names: Sequence[str], width: int = _WRAP) -> list[str]:
    """``key=a, b, c`` lines no wider than ``width`` (one name may exceed it alone)."""

    lines: list[str] = []
    current: list[str] = []
    for name in names:
        candidate = f"{key}={', '.join([*current, name])}"
        if current and len(candidate) > width:
            lines.append(", ".join(current))
            current = [name]
        else:
            current.append(name)
    if current:
        lines.append(", ".join(current))
    return lines


def _imports(recording: Recording, ctx: LearnContext, learned: Learned) -> None:
    # Only imports that found a module are recorded (the guard holds a report back until the
    # module is in sys.modules): a probe for a name that does not exist never gets here.
    names: set[str] = set()
    for access in recording.of_type(ImportAccess):
        top = access.top_level
        if not is_module_name(top):
            learned.warnings.append(f"skipped python-import for module {shown(top)}: not a name")
            continue
        if top == "__main__" or _import_allowed(top, ctx):
            continue
        names.add(top)
    groups = (
        (
            "Modules that reach outside the interpreter (native code, processes, network, "
            "object deserialisation, run-time code): review these first.",
            sorted(n for n in names if n in DANGEROUS_MODULES),
        ),
        (
            "Standard library.",
            sorted(n for n in names if n not in DANGEROUS_MODULES and n in sys.stdlib_module_names),
        ),
        (
            "Third-party packages and the program's own modules.",
            sorted(
                n for n in names if n not in DANGEROUS_MODULES and n not in sys.stdlib_module_names
            ),
        ),
    )
    for comment, group in groups:
        if not group:
            continue
        learned.note("imports", comment)
        for line in wrap_names("python-import", group):
            learned.add("imports", "python-import", line)


# -- environment ----------------------------------------------------------------------------------

#: Variables the launcher sets itself: a learned rule would override the run's own value.
#: ``TMPDIR`` points at the private temp directory; ``TEMP`` and ``TMP`` are the other names
#: ``tempfile`` consults (after ``TMPDIR``): passing the host's would only point elsewhere.
LAUNCHER_VARIABLES: frozenset[str] = frozenset({"TMPDIR", "TEMP", "TMP"})


def _env_granted(name: str, ctx: LearnContext) -> bool:
    if ctx.existing is None:
        return False
    from pysandboxes.policy.decide import build_environment

    return name in build_environment(ctx.existing, {name: "x"})


def _env_unset(name: str, ctx: LearnContext) -> str | None:
    if ctx.existing is None:
        return None
    for rule in ctx.existing.unenv:
        if fnmatch.fnmatchcase(name, rule.name):
            return f"{rule.text} in {rule.origin}"
    return None


#: What :func:`env_verdict` says of a variable the program read by name.
ENV_GRANT = "grant"  # written active: env=NAME=${NAME}
ENV_SECRET = "secret"  # looks like a secret: written commented out, under a review note
ENV_UNSET = "unset"  # not set while learning: written commented out
ENV_INTERPRETER = "interpreter"  # PYTHON*: not written, a warning
ENV_UNENV = "unenv"  # an unenv= of the file removes it: not written, a warning
ENV_BAD_NAME = "bad-name"  # not a plain name: not written, a warning
ENV_NEEDS_NOTHING = "nothing"  # the launcher's own, or already granted: nothing to say


def env_verdict(name: str, ctx: LearnContext) -> tuple[str, str | None]:
    """``(verdict, detail)`` for a variable read by name: one decision for learning (what to
    write) and audit (what to report), so that both say the same of the same run."""

    if name in LAUNCHER_VARIABLES or _env_granted(name, ctx):
        return ENV_NEEDS_NOTHING, None
    if ctx.host_env is not None and name not in ctx.host_env:
        # Nothing the run did depended on a value. A plain name is shown commented out; an
        # interpreter variable or a name no rule can hold is not worth a line.
        if name.startswith("PYTHON") or not is_env_name(name):
            return ENV_NEEDS_NOTHING, None
        return ENV_UNSET, "not set while learning"
    if not is_env_name(name):
        return ENV_BAD_NAME, "not a plain name"
    blocked = _env_unset(name, ctx)
    if blocked is not None:
        return ENV_UNENV, f"{blocked} removes it whatever else"
    if name.startswith("PYTHON"):
        return (
            ENV_INTERPRETER,
            "it acts on the interpreter before the Python layer is armed; add it by hand if "
            "the program needs it",
        )
    if looks_secret(name):
        return ENV_SECRET, "looks like a secret: review before granting it"
    return ENV_GRANT, None


def _environment(recording: Recording, ctx: LearnContext, learned: Learned) -> None:
    names = sorted({a.name for a in recording.of_type(EnvAccess)})
    unset: list[str] = []
    secrets: list[str] = []
    for name in names:
        verdict, detail = env_verdict(name, ctx)
        if verdict == ENV_NEEDS_NOTHING:
            continue
        if verdict == ENV_BAD_NAME:
            learned.warnings.append(f"skipped env for variable {shown(name)}: {detail}")
        elif verdict in (ENV_UNENV, ENV_INTERPRETER):
            learned.warnings.append(f"not granting env {name}: {detail}")
        elif verdict == ENV_UNSET:
            unset.append(name)
        elif verdict == ENV_SECRET:
            secrets.append(name)
        else:
            learned.add("environment", "env", f"{name}=${{{name}}}")
    # Secrets read by name: never granted without a person deciding (docs/learning.md).
    fresh = [name for name in secrets if f"# env={name}=${{{name}}}" not in ctx.existing_lines]
    if fresh:
        learned.warnings.append(
            "not granting " + ", ".join(fresh) + ": read by name, but the name looks like a "
            "secret; the line is written commented out, uncomment it if the program needs it"
        )
        learned.note(
            "environment",
            "Review: secret. Read by name, but the names look like secrets (tokens, keys,",
        )
        learned.note(
            "environment",
            "passwords, credential files), so they are NOT granted. Uncomment a line only if",
        )
        learned.note("environment", "the program must receive that secret:")
        for name in fresh:
            learned.note("environment", f"env={name}=${{{name}}}")
            learned.reviews.append(f"env={name}=${{{name}}}")
    # Not granted: the run never received a value, so nothing it did depends on one. Written as
    # comments for the reviewer, once per file.
    fresh = [name for name in unset if f"# env={name}=${{{name}}}" not in ctx.existing_lines]
    if fresh:
        learned.note(
            "environment",
            "Read by the program (or a library) but not set while learning, so not granted;",
        )
        learned.note("environment", "uncomment a line to pass that variable when it is set:")
        for name in fresh:
            learned.note("environment", f"env={name}=${{{name}}}")
    if recording.of_type(EnvScan) and SCAN_NOTE[0] not in ctx.existing_lines:
        for line in SCAN_NOTE:
            learned.note("environment", line.removeprefix("# "))


#: Written once when the program went through the whole environment (``os.environ.items()``,
#: ``.copy()``, ``urllib.request.getproxies()``...): no variable is granted for a scan.
SCAN_NOTE: tuple[str, ...] = (
    "# The program (or a library) also went through the whole environment (iterating",
    "# os.environ, copying it, urllib's *_proxy lookup...); no variable is granted for that:",
    "# it sees only what env= grants. Add what it needs by name, or with a pattern (APP_*).",
)


# -- sensitive calls ------------------------------------------------------------------------------


def _api_decision(function: str, category: str, ctx: LearnContext) -> str | None:
    """``ALLOW``/``DENY``/``None`` from the output file's own ``python-api`` rules (§2.5)."""

    if ctx.existing is None:
        return None
    from pysandboxes.policy.decide import api_decision

    allowed, rule = api_decision(ctx.existing, function, category)
    if allowed:
        return "ALLOW"
    return None if rule is None else "DENY"


def _unguarded(recording: Recording) -> bool:
    """Whether the run evaluated source text no ``eval-*`` line makes pass (code generation):
    the builtins are then learned unguarded, as ``python-api=ALLOW:builtins.compile``."""

    return any(key == UNGUARDED_KEY for a in recording.of_type(EvalAccess) for key, _ in a.items)


def _api(recording: Recording, ctx: LearnContext, learned: Learned) -> None:
    has_eval_items = any(a.items for a in recording.of_type(EvalAccess))
    unguarded = _unguarded(recording)
    seen: dict[str, str] = {}
    for access in recording.of_type(ApiAccess):
        if access.category == "dynamic-code" and (has_eval_items or unguarded):
            continue  # one line for every evaluation of source text, below
        seen.setdefault(access.function, access.category)
    if has_eval_items or unguarded:
        # Evaluated source text replays as it ran: unguarded. The eval-* lines that would guard
        # it instead are written commented out below it (_eval), for a reviewer to choose.
        seen.setdefault("builtins.compile", "dynamic-code")
    for function in sorted(seen):
        category = seen[function]
        decision = _api_decision(function, category, ctx)
        if decision == "ALLOW":
            continue
        if ctx.existing is not None and any(
            r.action == "DENY" and r.target == function for r in ctx.existing.python_api
        ):
            learned.warnings.append(
                f"not granting python-api for {function}: the file denies it by name"
            )
            continue
        why = unsafe_reason(function, extra=",")
        if why is not None:
            learned.warnings.append(f"skipped python-api for {shown(function)}: {why}")
            continue
        learned.add("api", "python-api", f"ALLOW:{function}", category or None)


# -- dynamic code ---------------------------------------------------------------------------------


def _eval(recording: Recording, ctx: LearnContext, learned: Learned) -> None:
    existing: set[tuple[str, str]] = set()
    if ctx.existing is not None:
        for rule in ctx.existing.eval_rules:
            for item in rule.value.split(","):
                existing.add((rule.key, item.strip()))
    per_key: dict[str, set[str]] = {}
    if _unguarded(recording) and any(a.items for a in recording.of_type(EvalAccess)):
        # The run evaluated a source no eval-* line makes pass (a library's code generation):
        # learned as python-api=ALLOW:builtins.compile, the builtins stay unguarded, and eval-*
        # lines beside it would only mislead a reviewer.
        learned.warnings.append(
            "the program evaluated source text that no eval-* rule can allow (code generation): "
            "learned as python-api=ALLOW:builtins.compile (unguarded), no eval-* line written"
        )
        return
    for access in recording.of_type(EvalAccess):
        for key, name in access.items:
            if (key, name) in existing:
                continue
            why = unsafe_reason(name, extra=",")
            if why is not None:
                learned.warnings.append(f"skipped {key} item {shown(name)}: {why}")
                continue
            per_key.setdefault(key, set()).add(name)
    lines: list[str] = []
    namespaces = per_key.pop("eval-namespace", set())
    if namespaces:  # a single-valued key: the widest namespace the run needed
        widest = max(namespaces, key=lambda name: _NAMESPACE_ORDER.get(name, -1))
        lines.append(f"eval-namespace={widest}")
    for key in sorted(per_key):
        lines.extend(f"{key}={line}" for line in wrap_names(key, sorted(per_key[key])))
    if not lines:
        return
    # Replayed unguarded, what the evaluated source imports is an import of the program's.
    known = set() if ctx.existing is None else {r.name for r in ctx.existing.python_import}
    modules = sorted(per_key.get("eval-import", set()) - known)
    for line in wrap_names("python-import", modules):
        learned.add("eval", "python-import", line)
    # Guarded evaluation is not plain exec (a closed namespace, budgets, checked attributes):
    # a learned file must replay as the run went, so the grant above stays, and these lines are
    # the reviewer's choice (tests/unit/evalguard/test_learn_eval.py shows both).
    learned.note("eval", "Review: dynamic code. The run evaluated source text, granted")
    learned.note("eval", "unguarded by python-api=ALLOW:builtins.compile. To guard it instead")
    learned.note("eval", "(docs/eval.md), remove that line and uncomment these:")
    for line in lines:
        learned.note("eval", line)
        learned.reviews.append(line)


#: eval-namespace values, narrowest first (docs/eval.md).
_NAMESPACE_ORDER = {"closed": 0, "adaptive": 1, "caller": 2}
