"""Learning mode end to end, through the real ``python-sb`` (SPEC §4, issue 5).

Each program is learned once (its rule file missing, or ``--learn``), then replayed with the
learned rules in force — the file's own provider included (``os-sandbox=${OS_SANDBOX:-...}``
from the template) — and must run exactly as it did, without a single refusal: the replay is run
with ``--denials=FILE`` and that file must stay absent.

Programs live in ``tests/e2e/programs/learn/`` and are copied into a temporary tree per test:
a home directory, a project (the current directory) and, for the report script, a skill
directory below home launched from another directory.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import PYTHON_SB, base_env, require, run_python, run_sb

PROGRAMS = Path(__file__).resolve().parent / "programs" / "learn"
SALES = "region,amount\nnorth,120.50\nsouth,80.00\nnorth,42.25\neast,310.00\n"


def _available(name: str) -> bool:
    try:
        return bool(get_provider(name).availability())
    except ConfigError:
        return False


def copy_program(name: str, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    shutil.copy(PROGRAMS / name, target)
    return target


def replay(
    args: list[str], *, cwd: Path, env: dict[str, str], tmp: Path, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """A run with the learned rules enforced; asserts that nothing was refused."""

    denials = tmp / "replay-denials.jsonl"
    result = run_sb([f"--denials={denials}", *args], cwd=cwd, env=env, input=input)
    refused = denials.read_text() if denials.exists() else ""
    assert result.returncode == 0, f"replay failed:\n{result.stderr}\ndenials:\n{refused}"
    assert refused == "", f"the replay was refused something:\n{refused}"
    assert "LEARNING MODE" not in result.stderr
    return result


def learned_rules(text: str) -> list[str]:
    """The rule lines of a rule file (comments and blanks dropped, inline comments cut)."""

    out = []
    for raw in text.splitlines():
        line = raw.split("  #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def imports_of(rules: list[str]) -> set[str]:
    prefix = "python-import="
    return {n.strip() for r in rules if r.startswith(prefix) for n in r[len(prefix) :].split(",")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


# -- the report script of the seed, run from another directory --------------------------------


def setup_report(home: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    scripts = home / "skills" / "report" / "scripts"
    script = copy_program("report.py", scripts)
    work = tmp_path / "work"
    work.mkdir()
    (work / "sales.csv").write_text(SALES)
    env = base_env(home, {"REPORT_TITLE": "Quarterly sales"})
    return script, work, env


def test_report_script_learned_from_another_directory_replays(home: Path, tmp_path: Path) -> None:
    script, work, env = setup_report(home, tmp_path)
    control = run_python([str(script), "sales.csv", "control.txt"], cwd=work, env=env)
    assert control.returncode == 0, control.stderr

    # The seed's advice: name the file, since a bare --learn writes into the current directory.
    rule_file = script.parent / ".py-sandboxes"
    args = [str(script), "sales.csv", "report.txt"]
    learn = run_sb([f"--learn={rule_file}", *args], cwd=work, env=env)
    assert learn.returncode == 0, learn.stderr
    assert "grants whatever the program does" in learn.stderr
    assert learn.stdout == control.stdout
    assert (work / "report.txt").read_text() == (work / "control.txt").read_text()
    assert not (work / ".py-sandboxes").exists()
    text = rule_file.read_text()
    rules = learned_rules(text)
    assert "expose-ro=~/skills/report/scripts" in rules  # the script's own directory
    assert "expose-rw=." in rules  # sales.csv read, report.txt written in the cwd
    assert "env=REPORT_TITLE=${REPORT_TITLE}" in rules
    assert "csv" in imports_of(rules)
    assert 'include "~/.config/py-sandboxes/user-py-sandboxes.profile"' in text  # the template

    (work / "report.txt").unlink()
    # Replayed from the other directory: the rule file next to the script is the one in force.
    result = replay(args, cwd=work, env=env, tmp=tmp_path)
    assert result.stdout == control.stdout
    assert (work / "report.txt").read_text() == (work / "control.txt").read_text()
    assert rule_file.read_text() == text


def test_relearning_a_reviewed_file_keeps_it_and_adds_only_new_lines(
    home: Path, tmp_path: Path
) -> None:
    script, work, env = setup_report(home, tmp_path)
    footer = home / ".config" / "report" / "footer.txt"
    footer.parent.mkdir(parents=True)
    footer.write_text("-- confidential --\n")
    rule_file = script.parent / ".py-sandboxes"
    first = run_sb(
        [f"--learn={rule_file}", str(script), "sales.csv", "report.txt"], cwd=work, env=env
    )
    assert first.returncode == 0, first.stderr
    reviewed = (
        "# Reviewed by Ann, 2026-11-29: the report only reads its input.\n"
        + rule_file.read_text().replace("py-sandbox=true", "py-sandbox=true  # keep this on")
    ).encode()
    rule_file.write_bytes(reviewed)

    extra = [str(script), "sales.csv", "report.txt", "--extra"]
    again = run_sb(["--learn", *extra], cwd=work, env=env)
    assert again.returncode == 0, again.stderr
    now = rule_file.read_bytes()
    assert now.startswith(reviewed)  # every byte of the reviewed file kept
    added = now[len(reviewed) :].decode()
    added_rules = learned_rules(added)
    assert "statistics" in imports_of(added_rules)
    assert "expose-ro=~/.config/report" in added_rules
    old_rules = set(learned_rules(reviewed.decode()))
    assert not old_rules & set(added_rules), "a rule the file had was written again"
    assert "# --- learned" in added
    backups = sorted(script.parent.glob(".py-sandboxes.*.bak"))
    assert len(backups) == 1 and backups[0].read_bytes() == reviewed

    result = replay(extra, cwd=work, env=env, tmp=tmp_path)
    assert "-- confidential --" in (work / "report.txt").read_text()
    assert "mean" in (work / "report.txt").read_text()
    assert result.returncode == 0

    # Learning the same run again finds nothing new: nothing written, no new backup.
    same = run_sb(["--learn", *extra], cwd=work, env=env)
    assert same.returncode == 0, same.stderr
    assert rule_file.read_bytes() == now
    assert sorted(script.parent.glob(".py-sandboxes.*.bak")) == backups


# -- HTTP on loopback and SQLite -----------------------------------------------------------------


def test_http_server_and_client_on_loopback_with_sqlite(home: Path, project: Path) -> None:
    script = copy_program("http_sqlite.py", project)
    env = base_env(home)
    learn = run_sb([str(script)], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    assert "fetched [['apple', 3], ['pear', 5]] (1 stored)" in learn.stdout
    rules = learned_rules((project / ".py-sandboxes").read_text())
    assert "expose-rw=./db" in rules or "expose-rw=." in rules
    net = [r for r in rules if r.startswith("net=")]
    # The server bound port 0; the client reached it on whatever port the kernel chose: that
    # connection belongs to the bind's IN grant (issue 11 point 10), so the IN line is all.
    assert net == ["net=ALLOW|TCP|127.0.0.1|0|IN"], net
    assert "own server" not in learn.stderr, learn.stderr

    result = replay([str(script)], cwd=project, env=env, tmp=project.parent)
    assert "fetched [['apple', 3], ['pear', 5]] (2 stored)" in result.stdout


# -- a third-party package that reads its own data files --------------------------------------


def test_third_party_package_reading_its_data_files(home: Path, project: Path) -> None:
    libs = project.parent / "libs"
    shutil.copytree(PROGRAMS / "libs", libs, ignore=shutil.ignore_patterns("__pycache__"))
    script = copy_program("use_package.py", project)
    env = base_env(home, {"APP_LIBS": str(libs)})
    learn = run_sb([str(script)], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == "<< learned >>\n"
    text = (project / ".py-sandboxes").read_text()
    rules = learned_rules(text)
    assert "env=APP_LIBS=${APP_LIBS}" in rules
    assert any(r.startswith("expose-ro=") and r.endswith("/libs") for r in rules), rules
    third_party = text.split("# Third-party", 1)[1].splitlines()[1]
    assert third_party == "python-import=tinyfmt"
    # Importing a package from outside the interpreter's directories is not dynamic code.
    assert not [r for r in rules if r.startswith("python-api=")], rules

    result = replay([str(script)], cwd=project, env=env, tmp=project.parent)
    assert result.stdout == "<< learned >>\n"


# -- tempfile and threads --------------------------------------------------------------------------


def test_tempfile_and_threads(home: Path, project: Path) -> None:
    script = copy_program("temp_threads.py", project)
    env = base_env(home)
    learn = run_sb([str(script)], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == "total=140\n"
    rules = learned_rules((project / ".py-sandboxes").read_text())
    # The private temp directory needs no rule: nothing under /tmp or ${TMPDIR} is exposed.
    assert not [r for r in rules if "TMPDIR" in r or r.startswith("expose-rw=/tmp")], rules
    assert any(r.startswith("python-api=ALLOW:") for r in rules), rules

    result = replay([str(script)], cwd=project, env=env, tmp=project.parent)
    assert result.stdout == "total=140\n"


# -- every way a learning run can end -------------------------------------------------------------


def setup_until(home: Path, project: Path) -> tuple[Path, dict[str, str]]:
    script = copy_program("until_signal.py", project / "app")
    (project / "data").mkdir()
    (project / "data" / "in.json").write_text(json.dumps([1, 2, 3]))
    return script, base_env(home, {"UNTIL_NAME": "probe"})


def assert_learned_until(project: Path) -> None:
    # A missing rule file: learning writes ./.py-sandboxes (the file a bare --learn writes).
    rules = learned_rules((project / ".py-sandboxes").read_text())
    assert "expose-ro=./app" in rules
    assert "expose-ro=./data" in rules
    assert "env=UNTIL_NAME=${UNTIL_NAME}" in rules
    assert "json" in imports_of(rules)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_learning_run_ended_by_a_signal_writes_what_it_saw(
    home: Path, project: Path, signum: signal.Signals
) -> None:
    script, env = setup_until(home, project)
    proc = subprocess.Popen(
        [PYTHON_SB, str(script)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready probe 3\n"
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == -signum, err  # python-sb ends like the program did
    assert_learned_until(project)


def test_a_learning_run_whose_program_is_killed_loses_nothing(home: Path, project: Path) -> None:
    """SIGKILL of the sandboxed interpreter: the records are already in python-sb."""

    script, env = setup_until(home, project)
    proc = subprocess.Popen(
        [PYTHON_SB, str(script)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready probe 3\n"
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert len(children) == 1, children  # python-sb supervises one sandboxed interpreter
        os.kill(int(children[0]), signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL, err
    assert_learned_until(project)


@pytest.mark.parametrize(("how", "status"), [("raise", 1), ("exit", 3)])
def test_a_learning_run_ended_by_an_exception_or_sys_exit_writes(
    home: Path, project: Path, how: str, status: int
) -> None:
    script, env = setup_until(home, project)
    result = run_sb([str(script), how], cwd=project, env=env)
    assert result.returncode == status, result.stderr
    if how == "raise":
        assert "RuntimeError: the program failed" in result.stderr
    assert_learned_until(project)


def test_learn_to_a_named_file_and_refused_under_the_lock(home: Path, project: Path) -> None:
    script, env = setup_until(home, project)
    target = project / "audit.py-sandboxes"
    result = run_sb([f"--learn={target}", str(script), "exit"], cwd=project, env=env)
    assert result.returncode == 3, result.stderr
    assert target.exists()
    assert not (project / "app" / ".py-sandboxes").exists()
    assert not (project / ".py-sandboxes").exists()

    locked = project / "app" / ".py-sandboxes"
    locked.write_text(target.read_text() + "learn=false\n")
    before = locked.read_bytes()
    refused = run_sb(["--learn", str(script), "exit"], cwd=project, env=env)
    assert refused.returncode == 2
    assert "learn=false" in refused.stderr
    assert locked.read_bytes() == before
    assert list((project / "app").glob("*.bak")) == []


def test_a_value_that_would_read_back_differently_is_skipped(home: Path, project: Path) -> None:
    odd = project / "odd#dir"
    odd.mkdir()
    (odd / "f.txt").write_text("x")
    code = "import os; open(os.path.join('odd#dir', 'f.txt')).read(); print('ok')"
    target = project / "learned.py-sandboxes"
    result = run_sb([f"--learn={target}", "-c", code], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert "skipped expose-ro for" in result.stderr
    assert "odd#dir" not in "\n".join(learned_rules(target.read_text()))


def test_nothing_learned_writes_nothing(home: Path, project: Path) -> None:
    target = project / "learned.py-sandboxes"
    target.write_text("python-import=*\n")
    before = target.read_bytes()
    result = run_sb([f"--learn={target}", "-c", "pass"], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == before
    assert sorted(os.listdir(project)) == ["learned.py-sandboxes"]


def test_a_learn_line_in_the_rule_file_names_the_output(home: Path, project: Path) -> None:
    main = project / ".py-sandboxes"
    main.write_text("learn=learned.py-sandboxes\npython-import=json\n")
    before = main.read_bytes()
    code = "import csv, json; print(json.dumps(csv.list_dialects() != []))"
    result = run_sb(["-c", code], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "true\n"
    assert main.read_bytes() == before  # the rule file in use is not the output
    rules = learned_rules((project / "learned.py-sandboxes").read_text())
    assert "csv" in imports_of(rules)


def test_a_module_run_with_m_is_learned_and_replayed(home: Path, project: Path) -> None:
    package = project / "tool"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import json, os\n"
        "with open(os.path.join('data', 'in.json'), encoding='utf-8') as f:\n"
        "    print(sum(json.load(f)))\n"
    )
    (project / "data").mkdir()
    (project / "data" / "in.json").write_text("[1, 2, 3]")
    env = base_env(home)
    learn = run_sb(["-m", "tool"], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == "6\n"
    rules = learned_rules((project / ".py-sandboxes").read_text())
    assert "json" in imports_of(rules)
    result = replay(["-m", "tool"], cwd=project, env=env, tmp=project.parent)
    assert result.stdout == "6\n"


def test_a_program_read_from_stdin_is_learned_and_replayed(home: Path, project: Path) -> None:
    (project / "notes.txt").write_text("three words here\n")
    program = "import re\nprint(len(re.findall(r'\\w+', open('notes.txt').read())))\n"
    env = base_env(home)
    learn = run_sb(["-"], cwd=project, env=env, input=program)
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == "3\n"
    rules = learned_rules((project / ".py-sandboxes").read_text())
    assert "expose-ro=." in rules and "re" in imports_of(rules)
    replayed = replay(["-"], cwd=project, env=env, tmp=project.parent, input=program)
    assert replayed.stdout == "3\n"


# -- issue 26: a run that runs nothing learns nothing -------------------------------------------


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["nosuch.py"], 2, "python-sb: can't open file '{project}/nosuch.py': [Errno 2] "),
        (["-m", "nosuchmod"], 1, "python-sb: No module named nosuchmod"),
        (["--audit", "nosuch.py"], 2, "python-sb: can't open file '{project}/nosuch.py': "),
        (["--audit", "-m", "nosuchmod"], 1, "python-sb: No module named nosuchmod"),
    ],
)
def test_a_program_that_does_not_exist_writes_no_rule_file(
    args: list[str], status: int, message: str, home: Path, project: Path
) -> None:
    """Defect 4: a missing script started learning and wrote ``expose-ro=.`` for it; a missing
    module said ``.py-sandboxes unchanged`` of a file that did not exist, naming the venv's
    python. Now python-sb says what CPython says (its status too), and learns nothing."""

    control = run_python(args[-1:] if args[-1].endswith(".py") else args[-2:], cwd=project)
    assert control.returncode == status
    result = run_sb(args, cwd=project, env=base_env(home))
    assert result.returncode == status
    assert result.stderr.startswith(message.format(project=project)), result.stderr
    assert "LEARNING" not in result.stderr and "AUDIT" not in result.stderr
    assert os.listdir(project) == []


def test_a_run_that_learns_nothing_says_no_file_was_written(home: Path, project: Path) -> None:
    """The message of an empty learning run does not call a file that does not exist
    "unchanged"."""

    result = run_sb(["-c", "pass"], cwd=project, env=base_env(home))
    assert result.returncode == 0, result.stderr
    assert "no rule file written (.py-sandboxes does not exist)" in result.stderr
    assert "unchanged" not in result.stderr
    assert os.listdir(project) == []


def test_a_missing_module_is_named_by_python_sb(home: Path, project: Path) -> None:
    """Enforced too: the child's "No module named" names python-sb, not the venv's python."""

    (project / ".py-sandboxes").write_text("os-sandbox=subprocess\nexpose-ro=.\n")
    result = run_sb(["-m", "nosuchmod"], cwd=project, env=base_env(home))
    assert result.returncode == 1
    assert result.stderr == "python-sb: No module named nosuchmod\n"


MAKES_ITS_OUTPUT = (
    "import os\n"
    "os.makedirs('out', exist_ok=True)\n"
    "with open(os.path.join('out', 'report.txt'), 'w') as f:\n"
    "    f.write('done')\n"
    "print(open(os.path.join('out', 'report.txt')).read())\n"
)


@pytest.mark.parametrize("provider", ["subprocess", "landlock", "bwrap"])
def test_a_program_that_creates_its_output_folder_replays_on_a_fresh_run(
    provider: str, home: Path, project: Path
) -> None:
    """Defect 5: ``os.makedirs("out")`` was learned as ``expose-rw=./out`` alone; after
    ``rm -rf out`` the replay was refused (a rule naming a missing path is skipped), and the
    line the refusal suggested was itself refused (no such file or directory)."""

    require(_available(provider), f"os-sandbox={provider} cannot run on this machine")
    (project / "make.py").write_text(MAKES_ITS_OUTPUT)
    env = base_env(home, {"OS_SANDBOX": provider})
    learn = run_sb(["make.py"], cwd=project, env=env)
    assert learn.returncode == 0, learn.stderr
    shutil.rmtree(project / "out")
    result = replay(["make.py"], cwd=project, env=env, tmp=project.parent)
    assert result.stdout == "done\n"


def test_the_line_a_refused_creation_suggests_is_accepted(home: Path, project: Path) -> None:
    """The refusal of a write to a path that does not exist yet suggests the directory that
    holds it (a rule may only name what exists), and that line lets the program run."""

    (project / "make.py").write_text(MAKES_ITS_OUTPUT)
    rules = "os-sandbox=subprocess\nexpose-ro=.\npython-import=os\n"
    (project / ".py-sandboxes").write_text(rules)
    refused = run_sb(["make.py"], cwd=project, env=base_env(home))
    assert refused.returncode == 1
    last = refused.stderr.strip().splitlines()[-1]
    suggestion = last.rsplit("(add '", 1)[1].removesuffix("')")
    assert suggestion == f"expose-rw={project}"
    (project / ".py-sandboxes").write_text(rules + suggestion + "\n")
    result = replay(["make.py"], cwd=project, env=base_env(home), tmp=project.parent)
    assert result.stdout == "done\n"
