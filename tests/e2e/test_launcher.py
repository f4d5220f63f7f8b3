"""python-sb against plain python3, through the real command, for every program form and option.

Each case runs the same command line under ``python3`` and under ``python-sb`` (providers
``subprocess`` and ``none``) and compares what the program saw (``sys.argv``, ``sys.path[0]``,
``__file__``, ``__name__``, flags), its output, its exit status and its traceback. The rule file
turns the Python layer off: these tests are about the launcher; the guard has its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.helpers import (
    PYTHON,
    PYTHON_SB,
    base_env,
    pty_session,
    require,
    run_python,
    run_sb,
    signalled,
    typing_keys,
)

SHOW = textwrap.dedent(
    """
    import json, sys
    print(json.dumps({
        "argv": sys.argv,
        "orig_argv": sys.orig_argv,
        "path0": sys.path[0],
        "path": sys.path,
        "flags": list(sys.flags),
        "file": globals().get("__file__"),
        "name": __name__,
        "spec": getattr(__spec__, "name", None),
        "package": __package__,
        "warnoptions": sys.warnoptions,
        "xoptions": sorted(sys._xoptions),
        "isolated": sys.flags.isolated,
        "optimize": sys.flags.optimize,
        "dont_write_bytecode": sys.dont_write_bytecode,
    }))
    """
)

PROVIDERS = ["subprocess", "none"]


@pytest.fixture
def tree(project: Path) -> Path:
    """A project with scripts, a package with __main__, a directory and a zip application."""

    # LANG as python3 gets it: without it the child runs in the C locale (UTF-8 mode).
    (project / ".py-sandboxes").write_text(
        "py-sandbox=false\nos-sandbox=subprocess\nenv=LANG=${LANG}\n"
    )
    (project / "sub").mkdir()
    (project / "sub" / "show.py").write_text(SHOW)
    (project / "link.py").symlink_to(project / "sub" / "show.py")
    pkg = project / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(SHOW)
    (pkg / "mod.py").write_text(SHOW)
    app = project / "app"
    app.mkdir()
    (app / "__main__.py").write_text(SHOW)
    with zipfile.ZipFile(project / "app.pyz", "w") as archive:
        archive.writestr("__main__.py", SHOW)
    (project / "fail.py").write_text("def inner():\n    1 / 0\n\n\ninner()\n")
    (project / "bad.py").write_text("x = (\n")
    (project / "failpkg").mkdir()
    (project / "failpkg" / "__init__.py").write_text("")
    failing = "def run():\n    raise ValueError('in -m')\n\n\nrun()\n"
    (project / "failpkg" / "__main__.py").write_text(failing)
    (project / "emptydir").mkdir()
    (project / "rules.py-sandboxes").write_text("py-sandbox=false\n")
    return project


def both(
    args: list[str], cwd: Path, home: Path, provider: str, stdin: str | None = None
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    env = base_env(home)
    plain = run_python(args, cwd=cwd, env=env, input=stdin, timeout=60)
    sandboxed = run_sb([f"--os-sandbox={provider}", *args], cwd=cwd, env=env, input=stdin)
    return plain, sandboxed


FORMS: list[list[str]] = [
    ["sub/show.py", "a", "-b", "--c=d"],
    ["link.py", "x"],
    ["-m", "pkg", "1", "2"],
    ["-m", "pkg.mod", "-m", "x"],
    ["-mpkg.mod", "glued"],
    ["app", "dir-arg"],
    ["app.pyz", "zip-arg"],
    ["-c", SHOW, "c-arg", "-c"],
    ["-c" + SHOW, "glued"],
    ["-", "stdin-arg"],
    ["-I", "sub/show.py"],
    ["-Im", "pkg.mod", "isolated"],
    ["-P", "-c", SHOW],
    ["-B", "-W", "error::DeprecationWarning", "-Wignore", "sub/show.py"],
    ["--", "sub/show.py", "--", "-x"],
]
#: Forms that use options ``none`` cannot apply after start-up (tested separately).
STARTUP_ONLY = {"-I", "-Im", "-P", "-X"}


@pytest.mark.parametrize(
    ("provider", "form"),
    [
        pytest.param(provider, form, id=f"{' '.join(form)[:40]}-{provider}".replace("\n", " "))
        for form in FORMS
        for provider in PROVIDERS
        if not (provider == "none" and STARTUP_ONLY & set(form))
    ],
)
def test_program_forms_match_python(tree: Path, home: Path, provider: str, form: list[str]) -> None:
    stdin = SHOW if "-" in form else None
    plain, sandboxed = both(form, tree, home, provider, stdin)
    assert sandboxed.returncode == plain.returncode, sandboxed.stderr
    assert sandboxed.stderr == named_python_sb(plain.stderr)
    if plain.returncode == 0:  # (-Im pkg.mod: isolated mode does not look in the cwd)
        seen, expected = json.loads(sandboxed.stdout), json.loads(plain.stdout)
        if provider == "none":  # python-sb's own interpreter keeps its start-up flags
            seen.pop("flags"), expected.pop("flags")
        assert seen == expected


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stdin_without_program(tree: Path, home: Path, provider: str) -> None:
    plain, sandboxed = both([], tree, home, provider, SHOW)
    assert sandboxed.returncode == plain.returncode == 0, sandboxed.stderr
    assert json.loads(sandboxed.stdout) == json.loads(plain.stdout)
    assert json.loads(plain.stdout)["argv"] == [""]


def test_startup_options_reach_the_child(tree: Path, home: Path) -> None:
    args = ["-OO", "-X", "dev", "-Xutf8", "-E", "-s", "-S", "-u", "-c", SHOW]
    plain, sandboxed = both(args, tree, home, "subprocess")
    assert sandboxed.returncode == 0, sandboxed.stderr
    seen = json.loads(sandboxed.stdout)
    assert seen == json.loads(plain.stdout)
    assert seen["optimize"] == 2 and seen["xoptions"] == ["dev", "utf8"]


def test_none_refuses_startup_options(tree: Path, home: Path) -> None:
    marker = tree / "ran"
    result = run_sb(
        ["--os-sandbox=none", "-I", "-c", f"open({str(marker)!r}, 'w')"],
        cwd=tree,
        env=base_env(home),
    )
    assert result.returncode == 2
    assert "os-sandbox=none" in result.stderr and "-I" in result.stderr
    assert not marker.exists()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "args",
    [
        ["fail.py"],
        ["-c", "import sys; sys.exit(3)"],
        ["-c", "import sys; sys.exit('bye')"],
        ["-c", "raise SystemExit"],
        ["-c", "def f():\n    raise ValueError('x')\nf()"],
        ["-c", "import sys\nsys.excepthook = lambda t, v, tb: print('hooked', t.__name__)\n1/0"],
        ["-c", "raise KeyboardInterrupt"],
        ["-m", "no_such_module_here"],
        ["no_such_script.py"],
        ["bad.py"],
        ["-m", "failpkg"],
        ["emptydir"],
        ["-c", "x = ("],
        ["-c", "import bad"],
    ],
    ids=lambda a: " ".join(a)[:40].replace("\n", " "),
)
def test_exit_status_and_traceback_match_python(
    tree: Path, home: Path, provider: str, args: list[str]
) -> None:
    plain, sandboxed = both(args, tree, home, provider)
    assert sandboxed.returncode == plain.returncode, sandboxed.stderr
    assert sandboxed.stdout == plain.stdout
    if args[0] == "no_such_script.py":
        # Same message, with python-sb's name in place of the interpreter's path.
        assert plain.stderr.startswith(PYTHON.rsplit("/", 1)[0]) or "can't open" in plain.stderr
        assert sandboxed.stderr.replace("python-sb", "X") == plain.stderr.replace(PYTHON, "X")
    else:
        assert sandboxed.stderr == named_python_sb(plain.stderr)


def named_python_sb(stderr: str) -> str:
    """CPython's ``-m`` errors (runpy's) name the interpreter; python-sb's name python-sb."""

    own = f"{PYTHON}: "
    return "".join(
        "python-sb: " + line[len(own) :] if line.startswith(own) else line
        for line in stderr.splitlines(keepends=True)
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_interactive_after_program(tree: Path, home: Path, provider: str) -> None:
    code = "x = 20\ny = 1 / 0"
    plain, sandboxed = both(["-i", "-c", code], tree, home, provider, "print(x + 22)\n")
    assert sandboxed.returncode == plain.returncode == 0
    assert sandboxed.stdout == plain.stdout == "42\n"
    assert "ZeroDivisionError" in sandboxed.stderr
    assert "[sb] >>> " in sandboxed.stderr  # the prompt says the session is sandboxed
    assert "child.py" not in sandboxed.stderr and "cli.py" not in sandboxed.stderr


@pytest.mark.parametrize("provider", ["subprocess"])  # none's REPL is the code module's
def test_interactive_after_script_output_order(tree: Path, home: Path, provider: str) -> None:
    """The program's output comes before the first prompt (stdout and stderr merged)."""

    (tree / "hello.py").write_text("print('hello')\n")
    outputs = []
    for argv in ([PYTHON], [PYTHON_SB, f"--os-sandbox={provider}"]):
        merged = subprocess.run(
            [*argv, "-i", "hello.py"],
            cwd=tree,
            env=base_env(home),
            input="print('again')\n",
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=60,
        )
        assert merged.returncode == 0, merged.stdout
        outputs.append(merged.stdout.replace("[sb] >>> ", ">>> "))
    assert outputs[0] == outputs[1]
    assert outputs[0].startswith("hello\n>>> ")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("script", ["bad.py", "no_such_script.py"])
def test_interactive_after_a_program_that_cannot_load(
    tree: Path, home: Path, provider: str, script: str
) -> None:
    """-i still gives the REPL (CPython's behaviour), and only after the guard is armed."""

    plain, sandboxed = both(["-i", script], tree, home, provider, "print(6 * 7)\n")
    assert sandboxed.returncode == plain.returncode == 0
    assert sandboxed.stdout == plain.stdout == "42\n"
    assert sandboxed.stderr.replace("[sb] >>> ", ">>> ").replace("python-sb", "X") == (
        plain.stderr.replace(PYTHON, "X")
    )


def test_interactive_after_sys_exit_stays(tree: Path, home: Path) -> None:
    plain, sandboxed = both(
        ["-i", "-c", "import sys; z = 5; sys.exit(4)"], tree, home, "subprocess", "print(z)\n"
    )
    assert sandboxed.returncode == plain.returncode
    assert sandboxed.stdout == plain.stdout == "5\n"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repl_banner_and_prompt_on_piped_stdin(tree: Path, home: Path, provider: str) -> None:
    result = run_sb(
        [f"--os-sandbox={provider}", "-i"], cwd=tree, env=base_env(home), input="print(6 * 7)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "42\n"
    assert "sandboxed session" in result.stderr
    assert ".py-sandboxes" in result.stderr and f"os-sandbox={provider}" in result.stderr
    assert "[sb] >>> " in result.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repl_on_a_terminal(tree: Path, home: Path, provider: str) -> None:
    # The native REPL: with the Python layer on and no python-import rule for it, IPython is
    # not permitted even when installed (test_repl_uses_ipython_when_installed_and_allowed).
    (tree / ".py-sandboxes").write_text("py-sandbox=true\nenv=LANG=${LANG}\n")
    keys = [b"print(6 * 7)\n", b"raise SystemExit(5)\n"]
    output, status = pty_session(
        [PYTHON_SB, f"--os-sandbox={provider}"],
        tree,
        base_env(home),
        typing_keys(keys, b">>> "),
        60,
    )
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 5, text
    assert "sandboxed session" in text and "[sb] >>> " in text and "42" in text
    assert "Python " + sys.version.split()[0] in text


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_signal_reaches_program(tree: Path, home: Path, provider: str, signum: int) -> None:
    codes = [
        signalled(argv, signum, tree, base_env(home))[0]
        for argv in ([PYTHON], [PYTHON_SB, f"--os-sandbox={provider}"])
    ]
    assert codes[0] == codes[1] == -signum


def test_version_and_help(tree: Path, home: Path) -> None:
    for args in (["-V"], ["--version"], ["-VV"]):
        plain, sandboxed = both(args, tree, home, "subprocess")
        assert sandboxed.returncode == 0 and sandboxed.stdout == plain.stdout
    result = run_sb(["-h"], cwd=tree, env=base_env(home))
    assert result.returncode == 0 and "--pysandboxes-config" in result.stdout
    assert "--explain" in result.stdout


@pytest.mark.parametrize(
    "args",
    [["-Z"], ["--foo"], ["-c"], ["-W"], ["-X"], ["-J"], ["-m"], ["--check-hash-based-pycs", "x"]],
    ids=" ".join,
)
def test_bad_options_fail_like_python(tree: Path, home: Path, args: list[str]) -> None:
    plain = run_python(args, cwd=tree, env=base_env(home))
    sandboxed = run_sb(args, cwd=tree, env=base_env(home))
    assert plain.returncode == 2
    if args == ["--foo"]:
        # Not a CPython option: for python-sb it is the rule key "foo", which does not exist.
        assert sandboxed.returncode == 2 and "unknown key 'foo'" in sandboxed.stderr
        return
    assert sandboxed.returncode == 2
    first, usage, hint = sandboxed.stderr.splitlines()
    assert first == plain.stderr.splitlines()[0]
    assert usage.startswith("usage: python-sb [option] ...")
    assert hint == "Try `python-sb -h' for more information."


def test_python_m_pysandboxes_is_python_sb(tree: Path, home: Path) -> None:
    env = base_env(home)
    direct = run_sb(["sub/show.py", "q"], cwd=tree, env=env)
    via_m = subprocess.run(
        [PYTHON, "-m", "pysandboxes", "sub/show.py", "q"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert via_m.returncode == direct.returncode == 0, via_m.stderr
    assert json.loads(via_m.stdout) == json.loads(direct.stdout)


def test_config_option_both_spellings(tree: Path, home: Path) -> None:
    other = tree / "elsewhere"
    other.mkdir()
    for spelling in (
        ["--pysandboxes-config=../rules.py-sandboxes"],
        ["--pysandboxes-config", "../rules.py-sandboxes"],
    ):
        result = run_sb(
            [*spelling, "--explain", "--json", "-c", "pass"], cwd=other, env=base_env(home)
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["rule_file"] == str(tree / "rules.py-sandboxes")


def test_refused_configuration_runs_nothing(tree: Path, home: Path) -> None:
    marker = tree / "ran"
    code = f"open({str(marker)!r}, 'w').close()"
    cases = [
        (["--no-such-key=1"], "unknown key 'no-such-key'"),
        (["--os-sandbox=nonsense"], "os-sandbox=nonsense"),
        (["--os-sandbox=qemu", "--qemu.accel=warp"], "is not an accelerator"),
        (["--learn", "--audit"], "--learn and --audit"),
    ]
    for options, message in cases:
        result = run_sb([*options, "-c", code], cwd=tree, env=base_env(home))
        assert result.returncode == 2, (options, result.stderr)
        assert message in result.stderr
        assert "nothing was run" in result.stderr
        assert not marker.exists()


def test_lock_refuses_command_line_rule(tree: Path, home: Path) -> None:
    (tree / ".py-sandboxes").write_text("py-sandbox=false\nos-sandbox=subprocess\nlearn=false\n")
    marker = tree / "ran"
    code = f"open({str(marker)!r}, 'w').close()"
    for options in (["--os-sandbox=none"], ["--env=X=1"], ["--learn"], ["--learn=other.rules"]):
        result = run_sb([*options, "-c", code], cwd=tree, env=base_env(home))
        assert result.returncode == 2, (options, result.stderr)
        assert "learn=false" in result.stderr
        assert ".py-sandboxes(3)" in result.stderr  # the lock line, with its origin
        assert not marker.exists()
    # Only the rule file itself can be chosen under the lock.
    result = run_sb(["-c", code], cwd=tree, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert marker.exists()


def test_missing_rule_file_is_named(project: Path, home: Path) -> None:
    """Without a rule file a run starts learning; where learning cannot start, the error names
    the file looked for. Under the lock of a chosen file, the missing file is refused."""

    (project / "lock.rules").write_text('learn=false\ninclude "missing.rules"\n')
    result = run_sb(
        ["--pysandboxes-config=nowhere.rules", "--explain", "--json", "-c", "pass"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["rule_file"] == str(project / "nowhere.rules")
    assert data["rule_file_exists"] is False and data["mode"] == "learn"
    assert any("does not exist" in warning for warning in data["warnings"])


def test_tmpdir_private_and_removed(tree: Path, home: Path) -> None:
    base = tree / "tmpbase"
    base.mkdir()
    stale = base / "pysb-999999999-dead"
    stale.mkdir()
    (stale / "left-over").write_text("x")
    code = (
        "import os, stat, json; t = os.environ['TMPDIR']; s = os.stat(t);"
        "print(json.dumps([t, stat.S_IMODE(s.st_mode), s.st_uid == os.getuid()]))"
    )
    for provider in PROVIDERS:
        result = run_sb(
            [f"--os-sandbox={provider}", "-c", code],
            cwd=tree,
            env=base_env(home, {"TMPDIR": str(base)}),
        )
        assert result.returncode == 0, result.stderr
        path, mode, mine = json.loads(result.stdout)
        assert os.path.dirname(path) == str(base)
        assert mode == 0o700 and mine
        assert not os.path.exists(path)  # removed by the child at exit
        assert not stale.exists()  # swept: its process is gone


GUARDED_FORMS: list[list[str]] = [
    ["sub/show.py", "a"],
    ["-m", "pkg", "1"],
    ["-c", SHOW, "c-arg"],
    ["-", "stdin-arg"],
    ["app", "dir-arg"],
]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("form", GUARDED_FORMS, ids=lambda f: " ".join(f)[:30].replace("\n", " "))
def test_forms_with_the_python_layer_on(
    tree: Path, home: Path, provider: str, form: list[str]
) -> None:
    """The same comparison with the guard armed (the default): the launcher's work before the
    program (path set-up, runpy, reading the script) must not trip the Python layer."""

    (tree / ".py-sandboxes").write_text(
        f"python-import=json\nexpose-ro={tree}\nenv=LANG=${{LANG}}\n"
    )
    stdin = SHOW if "-" in form else None
    plain, sandboxed = both(form, tree, home, provider, stdin)
    assert sandboxed.returncode == plain.returncode == 0, sandboxed.stderr
    assert json.loads(sandboxed.stdout) == json.loads(plain.stdout)
    assert sandboxed.stderr == plain.stderr


@pytest.mark.parametrize("verb", ["--review", "--check"])
def test_tool_subcommands_dispatch(tree: Path, home: Path, verb: str) -> None:
    """``python-sb --VERB ...`` (first word) belongs to ``pysandboxes.tools.VERB``; a version
    without it says so (exit status 2) rather than treating --VERB as a rule key."""

    import importlib.util

    result = run_sb([verb, "/nonexistent-a", "/nonexistent-b"], cwd=tree, env=base_env(home))
    assert result.returncode == 2
    if importlib.util.find_spec(f"pysandboxes.tools.{verb[2:]}") is not None:
        # The tool's own error (its other behaviour has its own tests), not a rule key's.
        assert result.stderr.startswith(f"python-sb: {verb}: /nonexistent-a:"), result.stderr
    else:
        assert f"{verb} is not available in this version" in result.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_in_process_options_match_python(tree: Path, home: Path, provider: str) -> None:
    """-u, -B and -W act the same under both providers (``none`` applies them in-process)."""

    code = (
        "import sys, warnings\n"
        "print(type(sys.stdout.buffer).__name__, sys.stdout.write_through,"
        " sys.dont_write_bytecode, sys.warnoptions)\n"
        "try:\n"
        "    warnings.warn('x')\n"
        "except UserWarning as exc:\n"
        "    print('raised', exc)\n"
    )
    args = ["-u", "-B", "-W", "error::UserWarning", "-c", code]
    plain, sandboxed = both(args, tree, home, provider)
    assert sandboxed.returncode == plain.returncode == 0, sandboxed.stderr
    assert sandboxed.stdout == plain.stdout
    assert "FileIO True True ['error::UserWarning']" in plain.stdout


@pytest.mark.parametrize("provider", PROVIDERS)
def test_denials_file_reaches_the_guard(tree: Path, home: Path, provider: str) -> None:
    """--denials=FILE (relative to the current directory) is where the Python layer appends
    each refusal as one JSON line."""

    (tree / ".py-sandboxes").write_text(f"expose-ro={tree}\n")
    (tree / "out").mkdir()
    result = run_sb(
        [f"--os-sandbox={provider}", "--denials=out/denials.jsonl", "-c", "import socket"],
        cwd=tree,
        env=base_env(home),
    )
    assert result.returncode == 1, result.stderr
    lines = (tree / "out" / "denials.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert {"kind": "import", "target": "socket"}.items() <= records[0].items(), records


def test_denials_file_that_cannot_be_written_is_refused(tree: Path, home: Path) -> None:
    marker = tree / "ran"
    result = run_sb(
        ["--denials=no/such/dir/d.jsonl", "-c", f"open({str(marker)!r}, 'w')"],
        cwd=tree,
        env=base_env(home),
    )
    assert result.returncode == 2
    assert "--denials=no/such/dir/d.jsonl: cannot be written" in result.stderr
    assert not marker.exists()


def test_terminal_ctrl_c_reaches_a_supervised_program(tree: Path, home: Path) -> None:
    """When python-sb stays as a parent (here: audit mode), Ctrl-C typed on the terminal reaches
    the program (the terminal signals the whole process group), the program's handler decides,
    and python-sb ends with the program's status. (That the supervisor does not forward it a
    second time cannot be observed reliably: a duplicate SIGINT arriving within microseconds is
    merged with the first by the kernel and by CPython's signal handling.)"""

    program = tree / "count_sigint.py"
    program.write_text(
        "import signal, sys, time\n"
        "count = 0\n"
        "def handler(*args):\n"
        "    global count\n"
        "    count += 1\n"
        "signal.signal(signal.SIGINT, handler)\n"
        "print('ready', flush=True)\n"
        "deadline = time.time() + 20\n"
        "while time.time() < deadline and count == 0:\n"
        "    time.sleep(0.05)\n"
        "time.sleep(1.0)  # a forwarded duplicate would arrive now\n"
        "print('count', count, flush=True)\n"
    )
    sent: list[bool] = []

    def interrupt(output: bytes) -> bytes | None:
        if not sent and b"ready" in output:
            sent.append(True)
            return b"\x03"  # Ctrl-C, as typed
        return None

    output, status = pty_session(
        [PYTHON_SB, "--audit", str(program)], tree, base_env(home), interrupt, 60
    )
    text = output.decode(errors="replace")
    assert sent, text
    assert "count 1" in text, text
    assert os.waitstatus_to_exitcode(status) == 0, text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repl_with_the_python_layer_on(tree: Path, home: Path, provider: str) -> None:
    """The REPL keeps working after a refusal: multi-line input, errors, a refused import."""

    (tree / ".py-sandboxes").write_text(f"expose-ro={tree}\n")
    session = "x = 6 * 7\nif x:\n    print('block', x)\n\nimport socket\n1 / 0\nprint('end')\n"
    result = run_sb([f"--os-sandbox={provider}", "-i"], cwd=tree, env=base_env(home), input=session)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "block 42\nend\n"
    assert "Module named 'socket' is not allowed by a rule" in result.stderr
    assert "ZeroDivisionError" in result.stderr


@pytest.mark.parametrize("program", [[], ["fail.py"]])
def test_repl_tracebacks_show_no_python_sb_frame(
    tree: Path, home: Path, program: list[str]
) -> None:
    """An error at the prompt (a refusal included) is reported with the program's frames only,
    as under python3: the REPL alone, and the REPL of ``-i`` after a program that failed."""

    (tree / ".py-sandboxes").write_text(f"expose-ro={tree}\n")
    session = "import socket\nopen('/etc/shadow')\ndef f():\n    raise ValueError(3)\n\nf()\n"
    result = run_sb(
        ["--os-sandbox=subprocess", "-i", *program], cwd=tree, env=base_env(home), input=session
    )
    plain = run_python(["-i", *program], cwd=tree, env=base_env(home), input=session)
    assert "RuleModuleNotFoundError: Module named 'socket'" in result.stderr
    assert "RulePermissionError: Read access to '/etc/shadow' DENIED" in result.stderr
    assert "pysandboxes" not in result.stderr.replace("pysandboxes.errors.", ""), result.stderr
    assert "importlib" not in result.stderr, result.stderr
    # The program's own frames are as python3 shows them (the socket and shadow lines differ:
    # python3 runs them).
    frames = [line for line in result.stderr.splitlines() if line.startswith("  File ")]
    assert frames == [
        *(
            [
                f'  File "{tree / "fail.py"}", line 5, in <module>',
                '  File "' + str(tree / "fail.py") + '", line 2, in inner',
            ]
            if program
            else []
        ),
        '  File "<stdin>", line 1, in <module>',
        '  File "<stdin>", line 1, in <module>',
        '  File "<stdin>", line 1, in <module>',
        '  File "<stdin>", line 2, in f',
    ], result.stderr
    assert [line for line in plain.stderr.splitlines() if "line 2, in f" in line] == [
        '  File "<stdin>", line 2, in f'
    ]


def test_repl_line_editing_with_the_python_layer_on(tree: Path, home: Path) -> None:
    """The REPL on a terminal keeps readline's line editing with the guard armed."""

    (tree / ".py-sandboxes").write_text(f"expose-ro={tree}\n")
    # Two left-arrow keys move the cursor before "2": the line becomes print(132).
    keys = [b"print(12)\x1b[D\x1b[D3\n", b"exit()\n"]
    output, _status = pty_session(
        [PYTHON_SB], tree, {**base_env(home), "TERM": "xterm"}, typing_keys(keys, b"[sb] >>> "), 60
    )
    assert b"\r\n132\r\n" in output, output


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repl_uses_ipython_when_installed_and_allowed(
    tree: Path, home: Path, provider: str
) -> None:
    """IPython is optional (``pip install pysandboxes[ipython]``); the dev extra installs it, so
    CI runs this test (skipped elsewhere without it, with the reason)."""

    import importlib.util

    require(
        importlib.util.find_spec("IPython") is not None,
        "IPython is not installed (optional extra pysandboxes[ipython]; the dev extra has it)",
    )
    (tree / ".py-sandboxes").write_text("py-sandbox=false\nenv=PYTHONPATH=${PYTHONPATH}\n")
    env = {**base_env(home), "TERM": "dumb"}
    if "PYTHONPATH" in os.environ:  # IPython installed outside the environment of the tests
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    keys = [b"print(6 * 7)\r", b"exit\r"]
    output, _status = pty_session(
        [PYTHON_SB, f"--os-sandbox={provider}"], tree, env, typing_keys(keys, b"[sb] In ["), 40
    )
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode(errors="replace"))  # colours
    assert "sandboxed session" in text and "[sb] In [1]" in text and "\n42" in text, text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tmpdir_removed_with_the_python_layer_on(tree: Path, home: Path, provider: str) -> None:
    """The clean-up at exit runs inside the sandbox: the guard must let it empty the directory."""

    (tree / ".py-sandboxes").write_text(f"expose-ro={tree}\npython-import=os\n")
    base = tree / "tmpbase"
    base.mkdir()
    code = (
        "import os\nt = os.environ['TMPDIR']\nos.mkdir(t + '/d')\n"
        "open(t + '/d/f', 'w').write('x')\nprint(t)\n"
    )
    result = run_sb(
        [f"--os-sandbox={provider}", "-c", code],
        cwd=tree,
        env=base_env(home, {"TMPDIR": str(base)}),
    )
    assert result.returncode == 0, result.stderr
    assert os.path.dirname(result.stdout.strip()) == str(base)
    assert list(base.iterdir()) == []
