"""The defects a new user met on the journey of issue 26, each through the real ``python-sb``.

Each test fails on the code before its fix; the seed scenarios themselves are the other files
of this directory (``test_journey_*.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import base_env, require, run_python, run_sb


def available(name: str) -> bool:
    """Whether ``os-sandbox=name`` can run on this machine."""

    try:
        return bool(get_provider(name).availability())
    except ConfigError:
        return False


PARTIAL_PROGRAM = """\
from pysandboxes import is_in_sandbox, sandbox, sandboxes

@sandbox
def double(x):
    return x * 2

print("in sandbox:", is_in_sandbox())
with sandboxes():
    print(double(21))
"""


@pytest.mark.parametrize("provider", ["none", "subprocess", "landlock", "bwrap"])
def test_a_partial_mode_program_runs_whole_under_python_sb(
    provider: str, home: Path, project: Path
) -> None:
    """docs/partial.md: under python-sb (complete mode) ``with sandboxes():`` starts no worker
    and a ``@sandbox`` function is a plain call, on every provider (defect 3: a worker was
    started, and under ``none`` ``is_in_sandbox()`` was false and python-sb said "nothing was
    run" after the program's output)."""

    require(available(provider), f"os-sandbox={provider} cannot run on this machine")
    (project / "app.py").write_text(PARTIAL_PROGRAM)
    (project / ".py-sandboxes").write_text(
        f"py-sandbox=true\nos-sandbox={provider}\nexpose-ro=.\npython-import=pysandboxes\n"
    )
    result = run_sb(["app.py"], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "in sandbox: True\n42\n"
    assert result.stderr == ""


def test_an_error_of_the_program_under_none_is_its_own(home: Path, project: Path) -> None:
    """Under ``os-sandbox=none`` the program runs in python-sb's interpreter: a ConfigError it
    raises after it started ends it as CPython ends it (exit 1, its traceback), not as a
    refused configuration ("nothing was run", exit 2)."""

    code = (
        "print('started')\n"
        "from pysandboxes.errors import ConfigError, ConfigProblem\n"
        "raise ConfigError([ConfigProblem('where', 'what')])\n"
    )
    control = run_python(["-c", code], cwd=project, env=base_env(home))
    assert control.returncode == 1
    (project / ".py-sandboxes").write_text("py-sandbox=false\nos-sandbox=none\n")
    result = run_sb(["-c", code], cwd=project, env=base_env(home))
    assert result.returncode == 1, result.stderr
    assert result.stdout == "started\n"
    assert "nothing was run" not in result.stderr
    assert result.stderr.rstrip().endswith("pysandboxes.errors.ConfigError: where: what")


@pytest.mark.parametrize("provider", ["subprocess", "landlock"])
def test_origins_below_home_are_shown_as_tilde(provider: str, home: Path, project: Path) -> None:
    """SPEC §2.1 (defect 7): the child showed a user profile's origin as an absolute path
    (its environment holds no HOME, so ``~`` was looked up elsewhere); the README shows
    ``from ~/.config/py-sandboxes/user-py-sandboxes.profile(1)``."""

    require(available(provider), f"os-sandbox={provider} cannot run on this machine")
    profile = home / ".config" / "py-sandboxes" / "user-py-sandboxes.profile"
    profile.parent.mkdir(parents=True)
    profile.write_text("net=DENY|*|10.0.0.0/8|*|OUT\n")
    (project / ".py-sandboxes").write_text(
        'include "~/.config/py-sandboxes/user-py-sandboxes.profile"\n'
        f"os-sandbox={provider}\npython-import=socket\nnet=ALLOW|*|*|*|OUT\n"
    )
    code = "import socket\nsocket.create_connection(('10.255.255.1', 80), timeout=1)\n"
    result = run_sb(["-c", code], cwd=project, env=base_env(home))
    assert result.returncode == 1
    expected = (
        "Connection to [10.255.255.1]:80 DENIED by explicit rule 'net=DENY|*|10.0.0.0/8|*|OUT' "
        "from ~/.config/py-sandboxes/user-py-sandboxes.profile(1)"
    )
    assert expected in result.stderr.splitlines()[-1]


def test_the_guard_reads_no_variable_for_the_program(home: Path, project: Path) -> None:
    """Defect 6: arming the guard looked up HOME (to show origins as ``~``), which learning
    counted as a read by the program: a second identical learning run added ``env=HOME`` and
    ``--audit`` reported HOME for a program that never reads it."""

    (project / "p.py").write_text("import subprocess\nsubprocess.run(['true'], check=True)\n")
    env = base_env(home)
    first = run_sb(["p.py"], cwd=project, env=env)
    assert first.returncode == 0, first.stderr
    learned = (project / ".py-sandboxes").read_text()
    again = run_sb(["--learn", "p.py"], cwd=project, env=env)
    assert again.returncode == 0, again.stderr
    assert (project / ".py-sandboxes").read_text() == learned
    assert "nothing new to add" in again.stderr
    audit = run_sb(["--audit", "p.py"], cwd=project, env=env)
    assert audit.returncode == 0, audit.stderr
    assert "no access outside the rules in this run" in audit.stderr


def test_explain_shows_the_lock_as_the_learn_setting(home: Path, project: Path) -> None:
    """Defect 8: under the lock ``--explain`` listed ``learn=`` as unset (``[default]``) while
    "locked by" named the ``learn=false`` line."""

    (project / ".py-sandboxes").write_text("os-sandbox=subprocess\nlearn=false\nexpose-ro=.\n")
    (project / "p.py").write_text("pass\n")
    text = run_sb(["--explain", "p.py"], cwd=project, env=base_env(home))
    assert text.returncode == 0, text.stderr
    assert "  learn=false    [.py-sandboxes(2)]" in text.stdout.splitlines()
    data = run_sb(["--explain", "--json", "p.py"], cwd=project, env=base_env(home))
    learn = json.loads(data.stdout)["settings"]["learn"]
    assert learn == {"value": False, "origin": ".py-sandboxes(2)"}


@pytest.mark.parametrize("user", [False, True])
def test_uninstall_hook_leaves_the_tree_as_it_was(user: bool, home: Path, project: Path) -> None:
    """Defect 11: ``--uninstall-hook`` removed the files install wrote but left the empty
    folders (``.claude``, ``.codex``, ``.github/hooks`` ...). A folder that holds something
    else (the project's own ``.github/workflows``) is kept."""

    (project / ".github" / "workflows").mkdir(parents=True)
    (project / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    base = home if user else project
    before = sorted(str(p.relative_to(base)) for p in base.rglob("*"))
    flag = ["--user"] if user else []
    agents = ["claude-code", "codex", "gemini", "cursor", "copilot"]
    for agent in agents:
        done = run_sb([f"--install-hook={agent}", *flag], cwd=project, env=base_env(home))
        assert done.returncode == 0, done.stderr
    assert sorted(str(p.relative_to(base)) for p in base.rglob("*")) != before
    for agent in agents:
        done = run_sb([f"--uninstall-hook={agent}", *flag], cwd=project, env=base_env(home))
        assert done.returncode == 0, done.stderr
    assert sorted(str(p.relative_to(base)) for p in base.rglob("*")) == before


def test_an_interactive_session_without_a_rule_file_writes_none(home: Path, project: Path) -> None:
    """Defect 11: a REPL started where there is no rule file wrote ``./.py-sandboxes`` at exit.
    It still learns (nothing is refused, and the banner says so) but keeps nothing unless
    ``--learn=FILE`` asks, and says so at the start and at the end."""

    import os

    from tests.helpers import PYTHON_SB, pty_session

    sent: list[bytes] = []

    def respond(output: bytes) -> bytes | None:
        if not sent and (b">>> " in output or b"In [1]" in output):
            sent.append(b"import json\r")
            return sent[-1]
        if len(sent) == 1 and (output.count(b">>> ") >= 2 or b"In [2]" in output):
            sent.append(b"exit()\r")
            return sent[-1]
        return None

    env = {**base_env(home), "TERM": "dumb"}
    output, status = pty_session([PYTHON_SB], project, env, respond, timeout=60)
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "No rule file: nothing is written at exit" in text
    assert "learned, none written" in text
    assert not (project / ".py-sandboxes").exists()


def test_every_example_with_a_shebang_is_executable() -> None:
    """Defect 12: ``examples/calculator/*.py`` had a python-sb shebang and mode 644, so
    ``./calc.py`` as their pages show it failed with "Permission denied"."""

    import os
    import subprocess

    from tests.helpers import REPO

    listed = subprocess.run(
        ["git", "ls-files", "-s", "examples"], cwd=REPO, capture_output=True, text=True
    )
    if listed.returncode != 0:  # not a git checkout (an sdist): the files themselves
        files = [(p, os.access(p, os.X_OK)) for p in (REPO / "examples").rglob("*.py")]
    else:
        files = []
        for line in listed.stdout.splitlines():
            meta, path = line.split("\t", 1)
            files.append((REPO / path, meta.startswith("100755")))
    checked = 0
    for path, executable in files:
        if path.suffix != ".py" or not path.exists():
            continue
        if path.read_bytes().startswith(b"#!"):
            checked += 1
            assert executable, f"{path.relative_to(REPO)} has a shebang but no execute bit"
    assert checked >= 5


def test_the_examples_extra_installs_what_the_examples_import() -> None:
    """Defect 12: the demo set-up installed none of what the calculator, MCP and CI examples
    import; ``pip install -e '.[examples]'`` (scripts/demo.sh) installs every third-party
    module they import."""

    import ast
    import sys
    import tomllib

    from tests.helpers import REPO

    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["examples"]
    names = {requirement.split(">")[0].split("<")[0].split("=")[0] for requirement in extra}
    imported: set[str] = set()
    for directory in ("calculator", "mcp-server", "ci"):
        for path in (REPO / "examples" / directory).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    imported.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    imported.add(node.module.split(".")[0])
    local = {"pysandboxes", "calc", "__future__"}
    third_party = {n for n in imported - local if n not in sys.stdlib_module_names}
    assert third_party <= names, third_party - names
    assert "pytest" in names  # the CI example runs its tests with pytest
    assert "'.[examples]'" in (REPO / "scripts" / "demo.sh").read_text()


def test_review_says_what_a_removed_profile_include_means(home: Path, project: Path) -> None:
    """Friction: "no longer applies: the user's or the node's restrictions ... apply" read as
    its opposite."""

    include = 'include "~/.config/py-sandboxes/user-py-sandboxes.profile"\n'
    (project / "old.py-sandboxes").write_text(include + "python-import=csv\n")
    (project / "new.py-sandboxes").write_text("python-import=csv\n")
    done = run_sb(
        ["--review", "old.py-sandboxes", "new.py-sandboxes"], cwd=project, env=base_env(home)
    )
    assert done.returncode == 1
    assert "the user's or the node's restrictions (net=DENY...) no longer apply" in done.stdout
    assert "no longer applies: the user's" not in done.stdout


def test_review_of_an_unknown_revision_says_so(home: Path, project: Path) -> None:
    """Friction: an unknown revision printed a bare ``git rev-parse`` line."""

    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    done = run_sb(["--review", "no-such-branch"], cwd=project, env=base_env(home))
    assert done.returncode == 2
    assert "no-such-branch: no such commit, branch or tag" in done.stderr
    assert "rev-parse" not in done.stderr
    outside = run_sb(["--review", "main"], cwd=home, env=base_env(home))
    assert outside.returncode == 2
    assert "not in a git repository" in outside.stderr


def test_an_empty_path_names_the_variable_that_is_not_set(home: Path, project: Path) -> None:
    """Friction: ``expose-ro=${NOPE}`` said "expose-ro= needs a path" without naming NOPE."""

    (project / ".py-sandboxes").write_text("expose-ro=${PYSB_TEST_NOPE}\n")
    done = run_sb(["-c", "pass"], cwd=project, env=base_env(home))
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "python-sb: .py-sandboxes(1): expose-ro= needs a path: its value is ${PYSB_TEST_NOPE}, "
        "which is not set (or empty) in python-sb's environment"
    )


def test_a_missing_qemu_kernel_is_named_with_its_origin(home: Path, project: Path) -> None:
    """Friction: ``--qemu.kernel=/nonexistent`` said "cannot tell its version from the name",
    labelled ``<config>`` instead of the option's ``<arg>``."""

    require(available("qemu"), "os-sandbox=qemu cannot run on this machine")
    (project / ".py-sandboxes").write_text("os-sandbox=qemu\nexpose-ro=.\n")
    done = run_sb(
        ["--qemu.kernel=/nonexistent/vmlinuz", "-c", "pass"], cwd=project, env=base_env(home)
    )
    assert done.returncode == 2
    assert (
        "python-sb: <arg>: os-sandbox=qemu: qemu.kernel=/nonexistent/vmlinuz: no such file"
        in done.stderr.splitlines()
    )


def test_landlock_does_not_ask_to_expose_a_program_already_exposed(
    home: Path, project: Path
) -> None:
    """Friction: under Landlock, a run whose rules expose the program it starts (as learning
    writes them: ``expose-ro=/usr/bin/true``) was still told to "expose their directory"."""

    require(available("landlock"), "os-sandbox=landlock cannot run on this machine")
    true = "/usr/bin/true"
    base = (
        "os-sandbox=landlock\nexpose-ro=.\npython-import=subprocess\nenv=PATH=${PATH}\n"
        "python-api=ALLOW:subprocess.run\n"
    )
    code = f"import subprocess\nsubprocess.run([{true!r}], check=True)\nprint('ran')\n"
    (project / ".py-sandboxes").write_text(base)
    told = run_sb(["-c", code], cwd=project, env=base_env(home))
    assert "expose their directory" in told.stderr  # nothing to run is exposed: the notice
    (project / ".py-sandboxes").write_text(base + f"expose-ro={true}\n")
    done = run_sb(["-c", code], cwd=project, env=base_env(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n"
    assert "expose their directory" not in done.stderr


def test_a_script_learned_from_its_own_folder_runs_from_anywhere(
    home: Path, tmp_path: Path
) -> None:
    """Friction: learned from inside a skill's scripts/ (the rule file written beside the
    script), the script's folder was written ``expose-ro=.``, relative to where learning ran:
    from another folder the script itself was not readable. Below home it is ``~/...``."""

    scripts = home / "skills" / "s" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "count.py").write_text("import sys\nprint(len(sys.argv[1:]))\n")
    learn = run_sb(["count.py", "a", "b"], cwd=scripts, env=base_env(home))
    assert learn.returncode == 0, learn.stderr
    rules = (scripts / ".py-sandboxes").read_text().splitlines()
    assert "expose-ro=~/skills/s/scripts" in rules
    assert "expose-ro=." not in rules
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = run_sb([str(scripts / "count.py"), "a", "b", "c"], cwd=elsewhere, env=base_env(home))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "3\n"


@pytest.mark.parametrize("where", ["file", "option"])
def test_a_grant_no_rule_may_give_is_one_line_and_exit_2(
    where: str, home: Path, project: Path
) -> None:
    """Defect 9: ``eval-call=__import__`` ended in a ``ConfigError`` traceback, exit 1; it is
    the one-line message of every configuration error, exit 2, nothing run (a regression test:
    the one start path of issue 24 already gave this)."""

    (project / "p.py").write_text("print('ran')\n")
    (project / ".py-sandboxes").write_text(
        "expose-ro=.\n" + ("eval-call=__import__\n" if where == "file" else "")
    )
    option = ["--eval-call=__import__"] if where == "option" else []
    done = run_sb([*option, "p.py"], cwd=project, env=base_env(home))
    origin = ".py-sandboxes(2)" if where == "file" else "<arg>"
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"python-sb: {origin}: eval-call=__import__: __import__ cannot be granted to "
        "evaluated code (imports any module)",
        "python-sb: nothing was run",
    ]


def test_eval_budgets_and_groups_as_people_write_them(home: Path, project: Path) -> None:
    """Defect 9: budgets written as people write them (``500_000``, ``20MB``) and the group
    ``tuple-methods`` were refused. They are accepted (``--explain`` shows what they mean),
    and ``tuple-methods`` allows tuple's methods only."""

    (project / ".py-sandboxes").write_text(
        "expose-ro=.\npython-import=pysandboxes\neval-attribute=tuple-methods\n"
        "eval-max-iterations=500_000\neval-max-alloc=20MB\neval-timeout=1_500ms\n"
    )
    (project / "p.py").write_text(
        "from pysandboxes import guarded_eval\n"
        "print(guarded_eval('t.count(1)', names={'t': (1, 1, 2)}))\n"
        "try:\n"
        "    guarded_eval('l.count(1)', names={'l': [1, 1, 2]})\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    done = run_sb(["p.py"], cwd=project, env=base_env(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "2\nEvalAttributeDenied\n"
    explained = run_sb(["--explain", "p.py"], cwd=project, env=base_env(home))
    budgets = [line for line in explained.stdout.splitlines() if "budgets:" in line]
    assert budgets, explained.stdout
    assert "eval-max-iterations=500000," in budgets[0]
    assert f"eval-max-alloc={20 * 1024 * 1024}," in budgets[0]
    assert "eval-timeout=1.5s," in budgets[0]


@pytest.mark.parametrize("where", ["file", "option"])
def test_a_provider_refusal_names_the_line_that_chose_the_provider(
    where: str, home: Path, project: Path
) -> None:
    """Friction: a provider's refusal was labelled ``<config>`` whatever chose the provider;
    it is the ``os-sandbox=`` line that did (``<arg>`` for the command-line option)."""

    require(available("landlock"), "os-sandbox=landlock cannot run on this machine")
    chosen = "os-sandbox=landlock\n" if where == "file" else ""
    (project / ".py-sandboxes").write_text(
        chosen + "py-sandbox=false\nexpose-ro=.\nnet=ALLOW|TCP|127.0.0.1|443|OUT\n"
        "net=DENY|TCP|127.0.0.2|443|OUT\n"
    )
    option = ["--os-sandbox=landlock"] if where == "option" else []
    done = run_sb([*option, "-c", "pass"], cwd=project, env=base_env(home))
    assert done.returncode == 2
    label = ".py-sandboxes(1)" if where == "file" else "<arg>"
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"python-sb: {label}: os-sandbox=landlock cannot "), done.stderr
    assert "<config>" not in done.stderr


def test_a_variable_unset_inside_a_path_is_named(home: Path, project: Path) -> None:
    """Friction, the same as ``expose-ro=${NOPE}``: inside a longer path the unset variable was
    not named (``expose-ro=${NOPE}/data``: "/data: no such file"), or the rule silently
    widened (``expose-ro=~/${NOPE}`` exposed the whole home)."""

    (project / ".py-sandboxes").write_text("expose-ro=~/${PYSB_TEST_NOPE}\n")
    done = run_sb(["-c", "pass"], cwd=project, env=base_env(home))
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "python-sb: .py-sandboxes(1): expose-ro= is ~/ because ${PYSB_TEST_NOPE} is not set "
        "(or empty) in python-sb's environment (write ${PYSB_TEST_NOPE:-} where an empty value "
        "is meant)"
    )


@pytest.mark.parametrize("tree", ["/usr", "/"])
def test_landlock_does_not_ask_to_expose_a_tree_holding_the_programs(
    tree: str, home: Path, project: Path
) -> None:
    """The same friction for an exposure above the programs' directory (``expose-ro=/usr``;
    ``expose-ro=/``, which learning writes for a run that listed the root): the child runs,
    and the run was still told to "expose their directory"."""

    require(available("landlock"), "os-sandbox=landlock cannot run on this machine")
    (project / ".py-sandboxes").write_text(
        f"os-sandbox=landlock\nexpose-ro={tree}\nexpose-ro=.\npython-import=subprocess\n"
        "env=PATH=${PATH}\npython-api=ALLOW:subprocess.run\n"
    )
    code = "import subprocess\nsubprocess.run(['true'], check=True)\nprint('ran')\n"
    done = run_sb(["-c", code], cwd=project, env=base_env(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n"
    assert "expose their directory" not in done.stderr


def test_what_lies_below_a_learned_scripts_folder_runs_from_anywhere(
    home: Path, tmp_path: Path
) -> None:
    """The same friction for a folder below the script's own (``out/``, written to): it was
    learned ``expose-rw=./out``, relative to where learning ran, and the run from elsewhere
    was refused the write. Below home it is ``~/...`` too."""

    scripts = home / "skills" / "s" / "scripts"
    (scripts / "out").mkdir(parents=True)
    (scripts / "save.py").write_text(
        "import os\nhere = os.path.dirname(os.path.abspath(__file__))\n"
        "open(os.path.join(here, 'out', 'o.txt'), 'w').write('x')\nprint('saved')\n"
    )
    learn = run_sb(["save.py"], cwd=scripts, env=base_env(home))
    assert learn.returncode == 0, learn.stderr
    rules = (scripts / ".py-sandboxes").read_text().splitlines()
    assert "expose-rw=~/skills/s/scripts/out" in rules
    assert "expose-rw=./out" not in rules
    (scripts / "out" / "o.txt").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = run_sb([str(scripts / "save.py")], cwd=elsewhere, env=base_env(home))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "saved\n"
