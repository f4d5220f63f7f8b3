"""Generalisation of recorded accesses into rule lines (pure, over real directories)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from pysandboxes.learn.generalize import (
    DANGEROUS_MODULES,
    SCAN_NOTE,
    LearnContext,
    Learned,
    default_grants,
    generalize,
    is_broad,
    wrap_names,
    written_form,
)
from pysandboxes.learn.records import (
    ApiAccess,
    EnvAccess,
    EnvScan,
    EvalAccess,
    FileAccess,
    ImportAccess,
    NetAccess,
    Recording,
)
from pysandboxes.learn.secrets import looks_secret, looks_secret_path
from pysandboxes.policy.model import (
    ApiRule,
    EnvRule,
    NameRule,
    NetRule,
    Origin,
    PathRule,
    Policy,
)

FILE = Origin("/p/.py-sandboxes", 3)


def recording(*accesses: object) -> Recording:
    rec = Recording()
    for access in accesses:
        rec.accesses[access] = None  # type: ignore[index]
    return rec


def rules(learned: Learned, section: str) -> list[str]:
    return [line for line in learned.sections.get(section, []) if not line.startswith("#")]


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A project (cwd), a home, a venv, a host temp dir and a private temp dir, all real."""

    root = tmp_path.resolve()
    paths = {name: root / name for name in ("proj", "home", "venv", "hosttmp", "hosttmp/private")}
    for path in paths.values():
        path.mkdir(parents=True, exist_ok=True)
    (paths["proj"] / "data" / "sub").mkdir(parents=True)
    (paths["proj"] / "data" / "in.csv").write_text("a\n")
    return paths


def context(tree: dict[str, Path], **kw: object) -> LearnContext:
    base: dict[str, object] = dict(
        cwd=str(tree["proj"]),
        home=str(tree["home"]),
        virtual_env=str(tree["venv"]),
        host_tmp=str(tree["hosttmp"]),
        private_tmp=str(tree["hosttmp/private"]),
        default_grants=("/usr/lib/python3.11", "/dev/null"),
        program_kind="code",
        program=None,
    )
    base.update(kw)
    return LearnContext(**base)  # type: ignore[arg-type]


def test_files_become_directories_in_the_written_forms(tree: dict[str, Path]) -> None:
    p, h = tree["proj"], tree["home"]
    rec = recording(
        FileAccess(str(p / "data" / "in.csv"), False),
        FileAccess(str(p / "data" / "sub"), False),  # listed: covered by ./data
        FileAccess(str(p / "out" / "report.txt"), True),
        FileAccess(str(h / "app" / "conf.ini"), False),
        FileAccess(str(h / ".netrc"), False),  # credentials: left for review, commented out
        FileAccess(str(h / ".aws" / "credentials"), False),  # likewise, by its directory
        FileAccess(str(tree["venv"] / "share" / "x.json"), False),
        FileAccess(str(tree["hosttmp"] / "job" / "a.txt"), True),
        FileAccess(str(tree["hosttmp/private"] / "scratch"), True),  # private temp: default
        FileAccess("/usr/lib/python3.11/json/__init__.py", False),  # interpreter: default
        FileAccess("/dev/null", True),
        FileAccess("/etc/hosts", False),  # /etc is too broad: the file alone
        FileAccess(str(p / "pkg" / "__pycache__" / "m.cpython-311.pyc"), True),  # cache write
        FileAccess(str(p / "pkg" / "__pycache__" / "m.cpython-311.pyc.1402"), True),  # its temp
        FileAccess(str(p / "pkg" / "__pycache__"), True),  # made by the import system
    )
    learned = generalize(rec, context(tree))
    assert rules(learned, "files") == [
        "expose-rw=${TMPDIR:-/tmp}/job",
        "expose-ro=${VIRTUAL_ENV}/share",
        "expose-ro=./data",
        "expose-rw=./out",
        "expose-ro=/etc/hosts",
        "expose-ro=~/app",
    ]
    section = learned.sections["files"]
    assert section[section.index("# expose-ro=~/.aws") - 3].startswith("# Review: secret")
    assert "# expose-ro=~/.netrc" in section  # directly in home: the file alone
    assert learned.reviews == ["expose-ro=~/.aws", "expose-ro=~/.netrc"]
    assert len(learned.warnings) == 1 and "~/.netrc" in learned.warnings[0]


def test_relative_paths_and_a_write_in_the_current_directory(tree: dict[str, Path]) -> None:
    rec = recording(
        FileAccess("report.txt", True),
        FileAccess("data/in.csv", False),
        FileAccess("@abstract", True),  # the guard's record of an abstract Unix socket
    )
    learned = generalize(rec, context(tree))
    # ./data is inside the read-write current directory: one line is enough.
    assert rules(learned, "files") == ["expose-rw=."]
    assert learned.warnings == ["not granting the abstract Unix socket '@abstract': no rule can"]


def test_read_only_parent_keeps_a_read_write_child(tree: dict[str, Path]) -> None:
    p = tree["proj"]
    rec = recording(
        FileAccess(str(p / "data"), False),
        FileAccess(str(p / "data" / "sub" / "out.txt"), True),
    )
    assert rules(generalize(rec, context(tree)), "files") == [
        "expose-ro=./data",
        "expose-rw=./data/sub",
    ]


def test_script_directory_is_always_exposed_read_only(tree: dict[str, Path]) -> None:
    script = tree["home"] / "skill" / "scripts" / "report.py"
    learned = generalize(recording(), context(tree, program_kind="script", program=str(script)))
    assert rules(learned, "files") == ["expose-ro=~/skill/scripts"]
    assert not learned.empty


def test_a_path_that_would_read_back_differently_is_skipped_with_a_warning(
    tree: dict[str, Path],
) -> None:
    p = tree["proj"]
    rec = recording(
        FileAccess(str(p / "a#b" / "f"), False),
        FileAccess(str(p / "cost$" / "f"), False),
        FileAccess(str(p / "new\nline" / "f"), False),
        FileAccess(str(p / " lead" / "f"), False),
        FileAccess(str(p / "quote'" / "f"), False),
        FileAccess(str(p / "ok dir" / "f"), False),
        FileAccess(str(p / "caf\udce9" / "f"), False),  # b"caf\xe9": not UTF-8
        FileAccess(str(p / "t\u00e9l\u00e9" / "f"), False),  # UTF-8: fine
    )
    learned = generalize(rec, context(tree))
    assert rules(learned, "files") == ["expose-ro=./ok dir", "expose-ro=./t\u00e9l\u00e9"]
    assert len(learned.warnings) == 6
    assert all(w.startswith("skipped expose-ro for ") for w in learned.warnings)
    assert any("'#'" in w for w in learned.warnings)
    assert any("'\\n'" in w for w in learned.warnings)


def test_what_the_output_file_grants_is_not_learned_again(tree: dict[str, Path]) -> None:
    p = tree["proj"]
    existing = Policy(
        expose_ro=(PathRule("expose-ro", str(p / "data"), FILE),),
        expose_rw=(PathRule("expose-rw", str(p / "out"), FILE),),
    )
    rec = recording(
        FileAccess(str(p / "data" / "in.csv"), False),  # granted
        FileAccess(str(p / "out" / "r.txt"), True),  # granted
        FileAccess(str(p / "data" / "sub" / "w.txt"), True),  # read-only there: needs rw
    )
    learned = generalize(rec, context(tree, existing=existing))
    assert rules(learned, "files") == ["expose-rw=./data/sub"]


def test_network_names_ports_and_directions(tree: dict[str, Path]) -> None:
    rec = recording(
        NetAccess("TCP", "API.example.com", "203.0.113.5", 443, "OUT"),
        NetAccess("TCP", "api.example.com", "203.0.113.6", 80, "OUT"),
        NetAccess("TCP", None, "::ffff:198.51.100.7", 25, "OUT"),  # mapped: judged as IPv4
        NetAccess("UDP", None, "192.0.2.1", 53, "OUT"),
        NetAccess("TCP", None, "0.0.0.0", 8000, "IN"),
        NetAccess("TCP", "lookup.example", "", 0, "OUT"),  # resolved only
    )
    learned = generalize(rec, context(tree))
    assert rules(learned, "network") == [
        "net=ALLOW|TCP|0.0.0.0|8000|IN",
        "net=ALLOW|TCP|198.51.100.7|25|OUT",
        "net=ALLOW|TCP|api.example.com|80,443|OUT",
        "net=ALLOW|TCP|lookup.example|*|OUT  # looked up, no port",
        "net=ALLOW|UDP|192.0.2.1|53|OUT",
    ]


def test_a_port_0_bind_is_written_alone_and_other_loopback_ports_as_they_are(
    tree: dict[str, Path],
) -> None:
    """The guard never records a loopback connection to the program's own server (it belongs
    to the bind's IN grant): what is recorded is another service, written as is, and the
    port-0 bind is the IN line alone (issue 11 point 10)."""

    rec = recording(
        NetAccess("TCP", None, "127.0.0.1", 0, "IN"),
        NetAccess("TCP", None, "127.0.0.1", 41234, "OUT"),
        NetAccess("TCP", None, "127.0.0.1", 5432, "OUT"),
    )
    learned = generalize(rec, context(tree))
    assert rules(learned, "network") == [
        "net=ALLOW|TCP|127.0.0.1|0|IN  # port 0: chosen by the kernel",
        "net=ALLOW|TCP|127.0.0.1|5432,41234|OUT",
    ]
    assert learned.warnings == []


def test_network_existing_allow_covers_and_deny_is_reported(tree: dict[str, Path]) -> None:
    existing = Policy(
        net=(
            NetRule("ALLOW", "*", "10.0.0.0/8", None, "OUT", FILE, "net=ALLOW|*|10.0.0.0/8|*|OUT"),
            NetRule("DENY", "TCP", "evil.example", ((1, 65535),), "*", FILE, "net=DENY|..", True),
        )
    )
    rec = recording(
        NetAccess("TCP", None, "10.1.2.3", 22, "OUT"),
        NetAccess("TCP", "evil.example", "192.0.2.9", 443, "OUT"),
        NetAccess("TCP", "bad|host", "192.0.2.10", 443, "OUT"),
    )
    learned = generalize(rec, context(tree, existing=existing))
    assert rules(learned, "network") == []
    assert len(learned.warnings) == 2
    assert "DENY wins" in learned.warnings[0]
    assert "'|'" in learned.warnings[1]


def test_modules_in_three_groups(tree: dict[str, Path]) -> None:
    rec = recording(
        ImportAccess("ctypes"),
        ImportAccess("json.decoder"),
        ImportAccess("json"),
        ImportAccess("csv"),
        ImportAccess("tinyfmt.data"),
        ImportAccess("subprocess"),
        ImportAccess("bad-name"),
    )
    learned = generalize(rec, context(tree))
    body = learned.sections["imports"]
    assert body[0].startswith("# Modules that reach outside")
    assert body[1] == "python-import=ctypes, subprocess"
    assert body[2] == "# Standard library."
    assert body[3] == "python-import=csv, json"
    assert body[4].startswith("# Third-party")
    assert body[5] == "python-import=tinyfmt"
    assert learned.warnings == ["skipped python-import for module 'bad-name': not a name"]
    assert {"ctypes", "subprocess", "socket", "pickle", "marshal"} <= DANGEROUS_MODULES
    assert "os" not in DANGEROUS_MODULES


def test_modules_already_allowed(tree: dict[str, Path]) -> None:
    existing = Policy(python_import=(NameRule("python-import", "json", FILE),))
    rec = recording(ImportAccess("json"), ImportAccess("csv"))
    assert rules(generalize(rec, context(tree, existing=existing)), "imports") == [
        "python-import=csv"
    ]
    existing = Policy(python_import=(NameRule("python-import", "*", FILE),))
    assert generalize(rec, context(tree, existing=existing)).empty


def test_long_module_lists_are_wrapped() -> None:
    names = [f"module_number_{i:02d}" for i in range(20)]
    lines = wrap_names("python-import", names, width=60)
    assert len(lines) > 1
    assert all(len("python-import=" + line) <= 60 for line in lines)
    assert ", ".join(lines).split(", ") == names


def test_environment(tree: dict[str, Path]) -> None:
    existing = Policy(
        env=(EnvRule("LC_*", "${LC_*}", FILE),),
        unenv=(NameRule("unenv", "AWS_*", FILE),),
    )
    rec = recording(
        EnvAccess("REPORT_TITLE"),
        EnvAccess("TMPDIR"),  # the launcher's own
        EnvAccess("LC_ALL"),  # granted by the pattern
        EnvAccess("AWS_SECRET"),  # unenv wins: warning
        EnvAccess("BAD=NAME"),
        EnvAccess("TEMP"),  # tempfile's other names: never the host's
        EnvAccess("OPTIONAL"),  # read, not set when learning
        EnvAccess("PYTHONPATH"),  # acts before the guard: a warning, no line
    )
    host = frozenset({"REPORT_TITLE", "LC_ALL", "AWS_SECRET", "TEMP", "BAD=NAME", "PYTHONPATH"})
    learned = generalize(rec, context(tree, existing=existing, host_env=host))
    assert learned.sections["environment"] == [
        "env=REPORT_TITLE=${REPORT_TITLE}",
        "# Read by the program (or a library) but not set while learning, so not granted;",
        "# uncomment a line to pass that variable when it is set:",
        "# env=OPTIONAL=${OPTIONAL}",
    ]
    assert ("env", "OPTIONAL=${OPTIONAL}") not in learned.rules
    # Already written (commented) in the file: not again.
    ctx = context(tree, existing=existing, host_env=host)
    ctx = dataclasses.replace(ctx, existing_lines=frozenset({"# env=OPTIONAL=${OPTIONAL}"}))
    assert generalize(rec, ctx).sections["environment"] == ["env=REPORT_TITLE=${REPORT_TITLE}"]
    assert len(learned.warnings) == 3
    assert "PYTHONPATH" in learned.warnings[-1]


def test_unset_interpreter_variables_and_odd_names_are_not_worth_a_line(
    tree: dict[str, Path],
) -> None:
    rec = recording(EnvAccess("PYTHONTZPATH"), EnvAccess("bamboo.buildKey"), EnvAccess("X"))
    learned = generalize(rec, context(tree, host_env=frozenset({"X"})))
    assert learned.sections["environment"] == ["env=X=${X}"]
    assert learned.warnings == []


def test_secrets_read_by_name_are_written_commented_for_review(tree: dict[str, Path]) -> None:
    names = ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "NETRC")
    rec = recording(*(EnvAccess(n) for n in names), EnvAccess("APP_MODE"), EnvScan())
    learned = generalize(rec, context(tree, host_env=frozenset({*names, "APP_MODE"})))
    section = learned.sections["environment"]
    assert [line for line in section if not line.startswith("#")] == ["env=APP_MODE=${APP_MODE}"]
    assert learned.rules == [("env", "APP_MODE=${APP_MODE}")]
    review = section.index(next(line for line in section if line.startswith("# Review: secret")))
    for name in names:
        line = f"# env={name}=${{{name}}}"
        assert line in section and section.index(line) > review
        assert any(name in warning for warning in learned.warnings)
    assert "# " + SCAN_NOTE[0].removeprefix("# ") in section  # the scan, said once
    # A secret alone is still written (commented), so that the decision is in the file.
    alone = generalize(
        recording(EnvAccess("API_KEY")), context(tree, host_env=frozenset({"API_KEY"}))
    )
    assert not alone.empty and alone.rules == []
    assert looks_secret("PGPASSFILE") and looks_secret("db_password") and looks_secret("MYSQL_PWD")
    for path in ("/h/.ssh", "/h/.aws/credentials", "/etc/ssl/private", "/h/.netrc", "/p/tls.key"):
        assert looks_secret_path(path), path
    for path in ("/h/app", "/etc/hosts", "/p/data/in.csv", "/h/.config/report"):
        assert not looks_secret_path(path), path
    assert not looks_secret("HOME") and not looks_secret("LANG") and not looks_secret("APP_MODE")


def test_sensitive_calls_by_function_with_their_category(tree: dict[str, Path]) -> None:
    existing = Policy(
        python_api=(
            ApiRule("ALLOW", "threads", FILE),
            ApiRule("DENY", "os.kill", FILE),
        )
    )
    rec = recording(
        ApiAccess("os.system", "process-exec"),
        ApiAccess("threading.Thread.start", "threads"),  # granted by the category
        ApiAccess("os.kill", "process-control"),  # denied by name: warning
    )
    learned = generalize(rec, context(tree, existing=existing))
    assert rules(learned, "api") == ["python-api=ALLOW:os.system  # process-exec"]
    assert learned.warnings == ["not granting python-api for os.kill: the file denies it by name"]


def test_dynamic_code(tree: dict[str, Path]) -> None:
    rec = recording(
        ApiAccess("builtins.eval", "dynamic-code"),
        EvalAccess((("eval-call", "len"), ("eval-syntax", "arith"))),
        EvalAccess((("eval-syntax", "compare"),)),
    )
    learned = generalize(rec, context(tree))
    # learned as it ran (unguarded); the lines that would guard it, commented out for review
    assert rules(learned, "api") == ["python-api=ALLOW:builtins.compile  # dynamic-code"]
    assert rules(learned, "eval") == []
    assert "# eval-call=len" in learned.sections["eval"]
    assert "# eval-syntax=arith, compare" in learned.sections["eval"]


def test_nothing_recorded_learns_nothing(tree: dict[str, Path]) -> None:
    learned = generalize(recording(), context(tree))
    assert learned.empty
    assert learned.sections == {}


def test_written_form_prefers_the_longest_base(tree: dict[str, Path]) -> None:
    ctx = context(tree, cwd=str(tree["home"] / "work"), home=str(tree["home"]))
    assert written_form(str(tree["home"] / "work" / "x"), ctx) == (".", "x")
    assert written_form(str(tree["home"] / "other"), ctx) == ("~", "other")
    assert written_form("/opt/tool", ctx) == ("", "/opt/tool")
    assert written_form(str(tree["home"] / "work"), ctx) == (".", "")


def test_broad_directories(tree: dict[str, Path]) -> None:
    ctx = context(tree)
    for path in ("/", "/etc", "/usr/share", "/var/lib", str(tree["home"]), str(tree["hosttmp"])):
        assert is_broad(path, ctx), path
    for path in ("/etc/ssl/private", str(tree["proj"]), str(tree["home"] / "app")):
        assert not is_broad(path, ctx), path


def test_default_grants_cover_this_interpreter() -> None:
    grants = default_grants()
    assert sys.prefix in grants
    assert "/dev/null" in grants


def test_a_created_directory_grants_its_parent(tree: dict[str, Path]) -> None:
    """A fresh run must be able to create it again (issue 26 defect 5): its parent."""

    made = tree["proj"] / "db"
    made.mkdir()
    rec = recording(FileAccess(str(made), True), FileAccess(str(made / "x.sqlite3"), True))
    assert rules(generalize(rec, context(tree)), "files") == ["expose-rw=."]


def test_a_directory_written_into_only_is_granted_itself(tree: dict[str, Path]) -> None:
    made = tree["proj"] / "db"
    made.mkdir()
    rec = recording(FileAccess(str(made / "x.sqlite3"), True))
    assert rules(generalize(rec, context(tree)), "files") == ["expose-rw=./db"]


def test_a_path_the_file_ignores_is_reported_not_exposed(tree: dict[str, Path]) -> None:
    existing = Policy(ignore=(PathRule("ignore", "*.pem", FILE, "*.pem"),))
    rec = recording(FileAccess(str(tree["proj"] / "data" / "key.pem"), False))
    learned = generalize(rec, context(tree, existing=existing))
    assert rules(learned, "files") == []
    assert len(learned.warnings) == 1 and "ignore=" in learned.warnings[0]


def test_the_directory_a_module_run_needs(tree: dict[str, Path]) -> None:
    package = tree["proj"] / "tool"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (tree["proj"] / "single.py").write_text("")
    for program in ("tool", "tool.sub", "single"):
        learned = generalize(recording(), context(tree, program_kind="module", program=program))
        assert rules(learned, "files") == ["expose-ro=."], program
    # A module of the standard library needs nothing (the interpreter's files are granted).
    ctx = context(
        tree, program_kind="module", program="json.tool", default_grants=tuple(default_grants())
    )
    assert generalize(recording(), ctx).empty


def test_a_distribution_prefix_grants_only_its_python_directories() -> None:
    grants = default_grants(["/usr"])
    assert "/usr" not in grants
    assert f"/usr/lib/python{sys.version_info[0]}.{sys.version_info[1]}" in grants


def test_context_of_a_run_from_the_environment(tree: dict[str, Path]) -> None:
    venv = tree["proj"] / ".venv"
    venv.mkdir()
    ctx = LearnContext.for_run(
        cwd=str(tree["proj"]),
        environ={
            "HOME": str(tree["home"]),
            "VIRTUAL_ENV": str(venv),
            "TMPDIR": str(tree["hosttmp"]),
            "REPORT": "x",
        },
        private_tmp=str(tree["hosttmp/private"]),
    )
    assert ctx.host_env == frozenset({"HOME", "VIRTUAL_ENV", "TMPDIR", "REPORT"})
    assert written_form(str(venv / "share" / "x"), ctx) == ("${VIRTUAL_ENV}", "share/x")
    assert written_form(str(tree["proj"] / "data"), ctx) == (".", "data")
    assert written_form(str(tree["hosttmp"] / "job"), ctx) == ("${TMPDIR:-/tmp}", "job")


def test_code_generation_no_eval_line_can_allow_is_learned_unguarded(
    tree: dict[str, Path],
) -> None:
    """A source no eval-* line makes pass (a library's generated methods) is learned as the
    unguarded builtins, with no eval-* line beside it (replayed guarded, it would be refused)."""

    rec = recording(
        ApiAccess("builtins.compile", "dynamic-code"),
        EvalAccess((("eval-syntax", "assign"),)),
        EvalAccess((("eval-unguarded", "builtins.compile"),)),
    )
    learned = generalize(rec, context(tree))
    assert rules(learned, "eval") == []
    assert rules(learned, "api") == ["python-api=ALLOW:builtins.compile  # dynamic-code"]
    assert any("no eval-* rule can allow" in warning for warning in learned.warnings)


def test_learning_never_writes_a_secret_line() -> None:
    """issue 32: ``secret=`` names who receives a real credential; no run can infer it."""

    from pysandboxes.learn.generalize import Learned

    learned = Learned()
    with pytest.raises(ValueError, match="never writes secret="):
        learned.add("network", "secret", "TOKEN|api.example.com|Authorization")
    assert learned.empty
