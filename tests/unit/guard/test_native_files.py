"""C functions that open files without an audit event (``guard/native_files.py``): ``pwd``,
``grp``, ``spwd``, ``readline``; judged as reads/writes of their files, the process's own
user and groups excepted; modules created after arming (fresh copies included) are wrapped."""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import sys
from pathlib import Path

import pytest

from tests.helpers import PYTHON_SB, base_env, pty_session, run_sb, typing_keys
from tests.unit.guard.harness import run_armed

TRY = """
import json, os, sys
def attempt(name, call):
    try:
        call()
        print(name, "ran")
    except PermissionError as exc:
        denial = exc.denial
        print(name, type(exc).__name__, denial.kind, denial.target)
"""

USERS = (
    TRY
    + """
import pwd, grp
attempt("own_uid", lambda: pwd.getpwuid(os.getuid()))
attempt("own_gid", lambda: grp.getgrgid(os.getgid()))
attempt("own_groups", lambda: [grp.getgrgid(g) for g in os.getgroups()])
attempt("expanduser", lambda: os.environ.pop("HOME", None) or os.path.expanduser("~"))
attempt("getpwall", pwd.getpwall)
attempt("getpwnam", lambda: pwd.getpwnam("root"))
attempt("other_uid", lambda: pwd.getpwuid(os.getuid() + 1))
attempt("getgrall", grp.getgrall)
attempt("getgrnam", lambda: grp.getgrnam("root"))
attempt("other_gid", lambda: grp.getgrgid(max([os.getgid(), *os.getgroups()]) + 1))
class Uid(int):
    def __index__(self):
        return 0
attempt("int_subclass", lambda: pwd.getpwuid(Uid(os.getuid() + 1)))
"""
)


def _outcomes(lines: list[str]) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in lines if " " in line)


def test_user_database_is_a_read_of_its_file(tmp_path: Path) -> None:
    result = run_armed(USERS, "expose-ro=.\npython-import=*\n", tmp_path)
    out = _outcomes(result.lines)
    for name in ("own_uid", "own_gid", "own_groups", "expanduser"):
        assert out[name] == "ran", (name, result.stdout, result.stderr)
    for name in ("getpwall", "getpwnam", "other_uid", "int_subclass"):
        assert out[name] == "RulePermissionError file /etc/passwd", (name, out)
    for name in ("getgrall", "getgrnam", "other_gid"):
        assert out[name] == "RulePermissionError file /etc/group", (name, out)


def test_user_database_with_a_rule(tmp_path: Path) -> None:
    rules = "expose-ro=.\nexpose-ro=/etc/passwd\nexpose-ro=/etc/group\npython-import=*\n"
    result = run_armed(USERS, rules, tmp_path)
    out = _outcomes(result.lines)
    for name in ("getpwall", "getpwnam", "getgrall", "getgrnam"):
        assert out[name] == "ran", (name, out)


def test_shadow_is_a_read_of_etc_shadow(tmp_path: Path) -> None:
    if importlib.util.find_spec("spwd") is None:  # nothing to wrap: no function reads it
        pytest.skip("CPython 3.13 removed spwd (PEP 594); no other module reads /etc/shadow")
    code = (
        TRY
        + """
import warnings
warnings.simplefilter("ignore", DeprecationWarning)
import spwd
attempt("getspall", spwd.getspall)
attempt("getspnam", lambda: spwd.getspnam("root"))
"""
    )
    out = _outcomes(run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path).lines)
    assert out["getspall"] == out["getspnam"] == "RulePermissionError file /etc/shadow", out


def test_fresh_copies_and_early_aliases_are_wrapped(tmp_path: Path) -> None:
    """A module created after arming is wrapped when created: again after ``del sys.modules``,
    through ``_imp.create_dynamic``/``create_builtin`` directly, under a package name; an alias
    taken before arming is replaced."""

    code = (
        TRY
        + """
import importlib.util, _imp
import builtins
attempt("early_alias", builtins.EARLY)
import grp
first = grp
del sys.modules["grp"]
import grp
assert grp is not first
attempt("grp_again", grp.getgrall)
spec = importlib.util.find_spec("grp")
fresh = _imp.create_dynamic(spec)
attempt("create_dynamic", fresh.getgrall)
spec = importlib.util.spec_from_file_location("pkg.grp", grp.__file__)
renamed = importlib.util.module_from_spec(spec)
attempt("renamed", renamed.getgrall)
fresh_pwd = _imp.create_builtin(importlib.util.find_spec("pwd"))
attempt("create_builtin", fresh_pwd.getpwall)
"""
    )
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(  # runs before the guard is armed
        "import builtins, pwd\nbuiltins.EARLY = pwd.getpwall\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path, env=env)
    out = _outcomes(result.lines)
    assert "grp_again" in out, result.stdout + result.stderr
    assert out["grp_again"] == out["renamed"] == "RulePermissionError file /etc/group", out
    assert out["create_dynamic"] == "RulePermissionError file /etc/group", out
    assert out["create_builtin"] == "RulePermissionError file /etc/passwd", out
    assert out["early_alias"] == "RulePermissionError file /etc/passwd", out


def test_originals_are_not_reachable_from_the_wrappers(tmp_path: Path) -> None:
    code = """
import pwd, grp, readline, _imp
seen, found = set(), []
def walk(obj, depth=0):
    if id(obj) in seen or depth > 8:
        return
    seen.add(id(obj))
    if type(obj).__name__ == "builtin_function_or_method" and obj.__name__ in (
            "getpwall", "getgrall", "write_history_file", "create_dynamic", "create_builtin"):
        found.append(obj.__name__)
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            walk(cell.cell_contents, depth + 1)
        except ValueError:
            pass
    for attr in ("__self__", "__defaults__", "__kwdefaults__", "__wrapped__"):
        value = getattr(obj, attr, None)
        if value is not None:
            walk(value, depth + 1)
    if isinstance(obj, (tuple, list)):
        for item in obj:
            walk(item, depth + 1)
    if isinstance(obj, dict):
        for item in obj.values():
            walk(item, depth + 1)
for fn in (pwd.getpwall, grp.getgrall, readline.write_history_file, _imp.create_dynamic,
           _imp.create_builtin):
    walk(fn)
print("found", sorted(set(found)))
"""
    result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path)
    assert "found []" in result.lines, result.stdout + result.stderr


READLINE = (
    TRY
    + """
import readline
readline.add_history("one line")
OUT = OUTSIDE
attempt("read", lambda: readline.read_history_file(OUT + "/secret"))
attempt("write", lambda: readline.write_history_file(OUT + "/hist"))
attempt("append", lambda: readline.append_history_file(1, OUT + "/appended"))
attempt("init", lambda: readline.read_init_file(OUT + "/secret"))
attempt("write_here", lambda: readline.write_history_file("here"))
attempt("write_default", lambda: readline.write_history_file())
attempt("read_default", lambda: readline.read_history_file(None))
attempt("append_here", lambda: readline.append_history_file(1, b"here"))
attempt("bytes_read", lambda: readline.read_history_file(os.fsencode(OUT) + b"/secret"))
"""
)


def test_readline_files_are_judged(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("the secret\n")
    (outside / "appended").write_text("kept\n")
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    code = READLINE.replace("OUTSIDE", repr(str(outside)))
    env = {**os.environ, "HOME": str(home)}
    result = run_armed(code, f"expose-rw=.\nexpose-rw={home}\npython-import=*\n", project, env=env)
    out = _outcomes(result.lines)
    secret, hist = str(outside / "secret"), str(outside / "hist")
    assert out["read"] == out["init"] == f"RulePermissionError file {secret}", out
    assert out["bytes_read"] == f"RulePermissionError file {secret}", out
    assert out["write"] == f"RulePermissionError file {hist}", out
    assert not (outside / "hist").exists()
    # append_history_file does not create the file (libreadline opens it without O_CREAT):
    # an existing one, since for a missing one CPython's FileNotFoundError is the answer.
    assert out["append"] == f"RulePermissionError file {outside / 'appended'}", out
    assert (outside / "appended").read_text() == "kept\n"
    for name in ("write_here", "write_default", "read_default", "append_here"):
        assert out[name] == "ran", (name, out, result.stderr)
    assert (project / "here").read_text().strip().endswith("one line")
    assert (home / ".history").exists()  # libreadline's default: $HOME/.history

    # Without a rule on the home directory, the default history file is refused there.
    result = run_armed(code, "expose-rw=.\npython-import=*\n", project, env=env)
    out = _outcomes(result.lines)
    assert out["write_default"] == f"RulePermissionError file {home}/.history", out


def test_repl_history_refusal_is_quiet(tmp_path: Path) -> None:
    """site's REPL set-up reads and writes ~/.python_history through readline: refused (no
    rule on the home directory), caught by site as an OSError -- no traceback, the REPL
    works, the refusals are in --denials."""

    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\n")
    denials = tmp_path / "denials.jsonl"
    env = {**base_env(home), "TERM": "xterm"}
    keys = [b"print(6 * 7)\n", b"exit()\n"]
    output, status = pty_session(
        [PYTHON_SB, "--os-sandbox=subprocess", f"--denials={denials}"],
        project,
        env,
        typing_keys(keys, b"[sb] >>> "),
        60,
    )
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "\r\n42\r\n" in text and "Traceback" not in text, text
    logged = [json.loads(line) for line in denials.read_text().splitlines()]
    # python-sb passes no HOME: site finds the home directory through pwd (own entry).
    history = pwd.getpwuid(os.getuid()).pw_dir.rstrip("/") + "/.python_history"
    expected = {("file", history, "write")}
    # Reading a history file that does not exist fails as in plain Python, FileNotFoundError
    # (issue 27, cause 1), and is no refusal: the read is refused where there is one to read
    # (a machine's earlier REPL sessions leave one; a fresh machine has none).
    if os.path.exists(history):
        expected.add(("file", history, "read"))
    assert {(d["kind"], d["target"], d["detail"]) for d in logged} >= expected, logged

    # Piped stdin: the same, quietly.
    result = run_sb(
        ["--os-sandbox=subprocess", "-i"],
        cwd=project,
        env=base_env(home),
        input="print(6 * 7)\n",
    )
    assert result.returncode == 0 and result.stdout == "42\n", result.stderr
    assert "Traceback" not in result.stderr and "Error" not in result.stderr, result.stderr


SQLITE = (
    TRY
    + """
import sqlite3
OUT = OUTSIDE
c = sqlite3.connect(":memory:")
print("isinstance", isinstance(c, sqlite3.Connection), type(c).__name__)
attempt("attach_here", lambda: c.execute("ATTACH 'here.db' AS h"))
attempt("attach_out", lambda: c.execute(f"ATTACH '{OUT}/s.db' AS s"))
attempt("attach_uri", lambda: c.execute(f"ATTACH 'file:{OUT}/s.db?mode=ro' AS s"))
attempt("attach_param", lambda: c.execute("ATTACH ? AS s", (OUT + "/s.db",)))
attempt("cursor_attach", lambda: c.cursor().execute(f"ATTACH '{OUT}/s.db' AS s"))
attempt("script_attach", lambda: c.executescript(f"ATTACH '{OUT}/s.db' AS s;"))
attempt("vacuum_out", lambda: c.execute("VACUUM INTO ?", (OUT + "/v.db",)))
attempt("vacuum_here", lambda: c.execute("VACUUM INTO 'v.db'"))
seen = []
c.set_authorizer(lambda *a: seen.append(a[0]) or 0)
attempt("composed", lambda: c.execute(f"ATTACH '{OUT}/s.db' AS s"))
attempt("composed_select", lambda: c.execute("select 1").fetchall())
print("callback", bool(seen))
c.set_authorizer(None)
attempt("after_none", lambda: c.execute(f"ATTACH '{OUT}/s.db' AS s"))
attempt("direct", lambda: sqlite3.Connection(":memory:"))
class Plain(sqlite3.Connection):
    pass
p = sqlite3.connect(":memory:", factory=Plain)
print("factory", isinstance(p, Plain))
try:
    p.execute(f"ATTACH '{OUT}/s.db' AS s")
    print("factory_attach ran")
except sqlite3.DatabaseError as exc:
    print("factory_attach", type(exc).__name__, exc)
class Early(sqlite3.Connection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
attempt("factory_init", lambda: sqlite3.connect(":memory:", factory=Early))
"""
)


def test_sqlite_attach_and_vacuum_into_are_judged(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    denials = tmp_path / "denials.jsonl"
    code = SQLITE.replace("OUTSIDE", repr(str(outside)))
    result = run_armed(code, "expose-rw=.\npython-import=*\n", project, denials_file=denials)
    out = _outcomes(result.lines)
    refused = f"RulePermissionError file {outside}/s.db"
    assert out["isinstance"] == "True Connection", out
    for name in ("attach_here", "vacuum_here", "composed_select"):
        assert out[name] == "ran", (name, out, result.stderr)
    for name in ("attach_out", "attach_uri", "cursor_attach", "script_attach", "composed"):
        assert out[name] == refused, (name, out)
    assert out["after_none"] == refused, out  # the guard's authorizer stays
    assert out["vacuum_out"] == f"RulePermissionError file {outside}/v.db", out
    assert out["attach_param"].startswith("RulePermissionError file <computed"), out
    assert out["callback"] == "True", out
    assert out["direct"].startswith("RulePermissionError file <sqlite3 connection"), out
    assert out["factory_init"].startswith("RulePermissionError file <sqlite3 connection"), out
    assert out["factory"] == "True", out
    assert out["factory_attach"] == "DatabaseError not authorized", out  # refused, logged
    assert not list(outside.iterdir())
    logged = [json.loads(line) for line in denials.read_text().splitlines()]
    assert sum(d["target"] == f"{outside}/s.db" for d in logged) >= 7, logged


SSL = (
    TRY
    + """
import ssl, pathlib
OUT = OUTSIDE
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
attempt("cafile_out", lambda: context.load_verify_locations(OUT + "/secret.txt"))
attempt("cafile_path", lambda: context.load_verify_locations(pathlib.Path(OUT, "secret.txt")))
attempt("capath_out", lambda: context.load_verify_locations(capath=OUT))
attempt("chain_out", lambda: context.load_cert_chain(OUT + "/secret.txt"))
attempt("keyfile_out", lambda: context.load_cert_chain("cert.pem", OUT + "/secret.txt"))
CAFILE = ssl.get_default_verify_paths().openssl_cafile
attempt("system_store", lambda: context.load_verify_locations(CAFILE))
attempt("default_context", ssl.create_default_context)
try:
    context.load_verify_locations("cert.pem")
    print("here ran")
except ssl.SSLError:
    print("here ssl_error")  # read (not a certificate): no refusal
"""
)


def test_ssl_files_are_judged(tmp_path: Path) -> None:
    """load_cert_chain/load_verify_locations read their files as OpenSSL does, with no
    audit event: judged as reads, whether ssl was imported before arming or after."""

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "cert.pem").write_text("not a certificate\n")
    code = SSL.replace("OUTSIDE", repr(str(outside)))
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import ssl\n")
    secret = f"RulePermissionError file {outside}/secret.txt"
    for env in (None, {**os.environ, "PYTHONPATH": str(site)}):
        result = run_armed(code, "expose-ro=.\npython-import=*\n", project, env=env)
        out = _outcomes(result.lines)
        for name in ("cafile_out", "cafile_path", "chain_out", "keyfile_out"):
            assert out[name] == secret, (name, out, result.stderr)
        assert out["capath_out"] == f"RulePermissionError file {outside}", out
        if os.path.exists(ssl_cafile()):
            assert out["system_store"] == "ran", out
        assert out["default_context"] == "ran", out
        assert out["here"] == "ssl_error", out


def ssl_cafile() -> str:
    import ssl

    return ssl.get_default_verify_paths().openssl_cafile


def test_guard_module_globals_change_nothing(tmp_path: Path) -> None:
    """The wrappers look nothing up in their modules' globals at run time: a program that
    rewrites them (``import pysandboxes.guard.native_files`` is allowed; ``__globals__``
    raises no event) changes no decision."""

    code = (
        TRY
        + """
from pysandboxes.guard import native_files, sqlite as guard_sqlite, wrappers
native_files.WRAPPED.clear()
native_files.PASSWD = native_files.GROUP = native_files.SHADOW = "/dev/null"
native_files._READ = 0
for name in list(vars(guard_sqlite)):
    if not name.startswith("__"):
        setattr(guard_sqlite, name, None)
wrappers.exact_path = lambda kit, path, **ignored: "fifo-here"
import pwd, grp, sqlite3
attempt("mkfifo", lambda: os.mkfifo("/tmp/../etc/pysb-fifo"))
attempt("getpwall", pwd.getpwall)
attempt("other_uid", lambda: pwd.getpwuid(os.getuid() + 1))
attempt("getgrall", grp.getgrall)
c = sqlite3.connect(":memory:")
attempt("attach", lambda: c.execute("ATTACH '/etc/x.db' AS s"))
"""
    )
    result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path)
    out = _outcomes(result.lines)
    assert out["getpwall"] == out["other_uid"] == "RulePermissionError file /etc/passwd", (
        out,
        result.stderr,
    )
    assert out["getgrall"] == "RulePermissionError file /etc/group", out
    assert out["attach"] == "RulePermissionError file /etc/x.db", out
    assert out["mkfifo"] == "RulePermissionError file /etc/pysb-fifo", out


def test_readline_include_is_judged(tmp_path: Path) -> None:
    """``$include FILE`` in ``parse_and_bind`` or in an init file makes libreadline read FILE:
    judged as a read, nested includes too; ordinary bindings are untouched."""

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("TOKEN=abc\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "nested.rc").write_text(f"set bell-style none\n  $Include   {outside}/secret\n")
    (project / "plain.rc").write_text('"\\C-x": "x"\n$include plain2.rc\n')
    (project / "plain2.rc").write_text("set bell-style none\n")
    code = (
        TRY
        + f"""
import readline
attempt("bind", lambda: readline.parse_and_bind("tab: complete"))
attempt("include", lambda: readline.parse_and_bind("$include {outside}/secret"))
attempt("include_spaced", lambda: readline.parse_and_bind("  $ INCLUDE\\t{outside}/secret"))
attempt("nested_init", lambda: readline.read_init_file("nested.rc"))
attempt("nested_bind", lambda: readline.parse_and_bind("$include nested.rc"))
attempt("plain_init", lambda: readline.read_init_file("plain.rc"))
"""
    )
    out = _outcomes(run_armed(code, "expose-ro=.\npython-import=*\n", project).lines)
    secret = f"RulePermissionError file {outside}/secret"
    for name in ("include", "include_spaced", "nested_init", "nested_bind"):
        assert out[name] == secret, (name, out)
    assert out["bind"] == out["plain_init"] == "ran", out


def test_readline_import_reads_a_chosen_init_file(tmp_path: Path) -> None:
    """``import readline`` reads ``$INPUTRC`` (else ``$HOME/.inputrc``): judged, with its
    ``$include`` files, when the program set ``INPUTRC`` or changed ``HOME``."""

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("TOKEN=abc\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "evil.rc").write_text(f"$include {outside}/secret\n")
    (project / ".inputrc").write_text(f"$include {outside}/secret\n")
    secret = f"RulePermissionError file {outside}/secret"
    for setting in (
        f"os.environ['INPUTRC'] = {str(project / 'evil.rc')!r}",
        f"os.environ['HOME'] = {str(project)!r}",
    ):
        code = TRY + setting + "\nattempt('import', lambda: __import__('readline'))\n"
        out = _outcomes(run_armed(code, "expose-ro=.\npython-import=*\n", project).lines)
        assert out["import"] == secret, (setting, out)
    code = TRY + "attempt('import', lambda: __import__('readline'))\n"
    out = _outcomes(run_armed(code, "expose-ro=.\npython-import=*\n", project).lines)
    assert out["import"] == "ran", out


def test_openssl_environment_chosen_by_the_program(tmp_path: Path) -> None:
    """OpenSSL reads $OPENSSL_CONF at its first initialisation (a configuration can load
    engines and providers: native code) and $SSL_CERT_FILE/$SSL_CERT_DIR in
    set_default_verify_paths; _ssl._test_decode_cert reads a file too."""

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("secret\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "openssl.cnf").write_text("# empty\n")
    conf = str(project / "openssl.cnf")
    code = (
        TRY
        + f"""
os.environ["OPENSSL_CONF"] = {conf!r}
attempt("hashlib", lambda: __import__("hashlib").sha256(b"x"))
"""
    )
    out = _outcomes(run_armed(code, "expose-ro=.\npython-import=*\n", project).lines)
    assert out["hashlib"].startswith("RuleApiPermissionError"), out
    rules = "expose-ro=.\npython-import=*\npython-api=ALLOW:openssl.config\n"
    out = _outcomes(run_armed(code, rules, project).lines)
    assert out["hashlib"] == "ran", out
    code = (
        TRY
        + f"""
import ssl, _ssl
attempt("decode", lambda: _ssl._test_decode_cert({str(outside / "secret")!r}))
os.environ["SSL_CERT_FILE"] = {str(outside / "secret")!r}
attempt("default_paths", lambda: ssl.create_default_context())
"""
    )
    out = _outcomes(run_armed(code, "expose-ro=.\npython-import=*\n", project).lines)
    secret = f"RulePermissionError file {outside}/secret"
    assert out["decode"] == out["default_paths"] == secret, out


def test_readline_init_file_tilde_is_expanded_or_refused(tmp_path: Path) -> None:
    """libreadline runs tilde expansion on an init file's name: a leading ``~`` is judged as
    the home directory it means; any other ``~`` (libreadline also expands one after a space)
    is refused rather than judged as written."""

    home = tmp_path / "home"
    home.mkdir()
    (home / "x.inputrc").write_text("set bell-style none\n")
    project = tmp_path / "project"
    project.mkdir()
    code = (
        "import readline\n"
        "for name in ('~/x.inputrc', '/tmp/dd ~'):\n"
        "    try:\n"
        "        readline.read_init_file(name)\n"
        "        print('read')\n"
        "    except ValueError:\n"
        "        print('refused')\n"
        "    except OSError as exc:\n"
        "        print(type(exc).__name__)\n"
    )
    env = {**os.environ, "HOME": str(home)}
    denied = run_armed(code, "expose-ro=.\npython-import=*\n", project, env=env)
    assert denied.lines == ["RulePermissionError", "refused"], denied.stdout + denied.stderr
    allowed = run_armed(
        code, f"expose-ro=.\nexpose-ro={home}\npython-import=*\n", tmp_path, env=env
    )
    assert allowed.lines == ["read", "refused"], allowed.stdout + allowed.stderr


SEMAPHORES = (
    TRY
    + """
import _multiprocessing, multiprocessing
mine = "/pysb-mine-" + os.urandom(4).hex()
other = OTHER
attempt("lock", lambda: multiprocessing.Lock().acquire())
attempt("create_persistent", lambda: _multiprocessing.SemLock(1, 1, 1, mine, False))
attempt("unlink_mine", lambda: _multiprocessing.sem_unlink(mine))
attempt("unlink_other", lambda: _multiprocessing.sem_unlink(other))
attempt("rebuild_other", lambda: _multiprocessing.SemLock._rebuild(0, 1, 1, other))
try:
    _multiprocessing.sem_unlink("x\\x00y")
except ValueError:
    print("nul ValueError")
"""
)


def test_named_semaphores_of_others_are_judged(tmp_path: Path) -> None:
    """Named semaphores (/dev/shm/sem.NAME): creating one needs no rule (O_EXCL: it cannot
    touch another's), removing or opening by name one this process did not create is judged
    (issue 18, class 4)."""

    import _multiprocessing

    # Another's semaphore exists (for a missing one CPython's FileNotFoundError is the answer).
    other = "/pysb-other-" + os.urandom(4).hex()
    made = _multiprocessing.SemLock(1, 1, 1, other, False)
    try:
        code = SEMAPHORES.replace("OTHER", repr(other))
        result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path)
    finally:
        del made
        _multiprocessing.sem_unlink(other)
    out = _outcomes(result.lines)
    for name in ("lock", "create_persistent", "unlink_mine"):
        assert out[name] == "ran", (name, result.stdout, result.stderr)
    for name in ("unlink_other", "rebuild_other"):
        assert out[name].startswith("RulePermissionError file /dev/shm/sem.pysb-other-"), out
    assert out["nul"] == "ValueError"


def test_perf_map_is_a_write_of_tmp(tmp_path: Path) -> None:
    """sys.activate_stack_trampoline (3.12+) writes /tmp/perf-PID.map with no audit event:
    judged as a write of that file. On 3.11 the function does not exist (nothing to judge)."""

    code = (
        TRY
        + """
if hasattr(sys, "activate_stack_trampoline"):
    attempt("perf", lambda: sys.activate_stack_trampoline("perf"))
else:
    print("perf absent")
"""
    )
    result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path)
    out = _outcomes(result.lines)
    if out.get("perf") == "absent":
        assert sys.version_info < (3, 12)
        return
    assert out["perf"].startswith("RulePermissionError file /tmp/perf-"), out
