"""The Python layer through the real ``python-sb`` command (``--os-sandbox=subprocess``).

Exact refusal messages of SPEC §2.4 and §3.3 (with a rule from the user profile, shown with
its ``~/`` origin), ``--denials=FILE`` lines, and the guard armed for ``-c`` and ``-m``
programs. No packet leaves: every refused connection is refused before the system call.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import base_env, run_sb


def _program_denials(path: Path) -> list[dict[str, object]]:
    """The --denials lines; the launcher's own clean-up at exit adds none (it is not the
    program, see guard/files.py)."""

    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _run_prog(project: Path, home: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``prog.py`` of ``project`` under ``--os-sandbox=subprocess`` with a ``--denials`` file
    beside the project; the result and that file."""

    denials = project.parent / "denials.jsonl"
    result = run_sb(
        ["--os-sandbox=subprocess", f"--denials={denials}", "prog.py"],
        cwd=project,
        env=base_env(home),
    )
    return result, denials


PROGRAM = """
import socket
for address in (("10.255.255.1", 80), ("203.0.113.9", 443)):
    s = socket.socket()
    try:
        s.connect(address)
    except ConnectionRefusedError as exc:
        print(exc)
try:
    import ctypes
except ImportError as exc:
    print(type(exc).__name__, exc)
try:
    import csv
except ModuleNotFoundError as exc:
    print(type(exc).__name__, exc)
"""


def test_messages_and_denials_file(home: Path, project: Path) -> None:
    profile = home / ".config" / "py-sandboxes" / "user-py-sandboxes.profile"
    profile.parent.mkdir(parents=True)
    profile.write_text("net=DENY|*|10.0.0.0/8|*|OUT\n")
    (project / ".py-sandboxes").write_text(
        'include "~/.config/py-sandboxes/user-py-sandboxes.profile"\n'
        "env=HOME=${HOME}\n"
        "expose-ro=.\n"
        "python-import=socket\n"
        "net=ALLOW|TCP|127.0.0.1|*|OUT\n"
    )
    (project / "prog.py").write_text(PROGRAM)
    result, denials = _run_prog(project, home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Connection to [10.255.255.1]:80 DENIED by explicit rule 'net=DENY|*|10.0.0.0/8|*|OUT' "
        "from ~/.config/py-sandboxes/user-py-sandboxes.profile(1)",
        "Connection to [203.0.113.9]:443 DENIED: no net= rule allows it",
        "RuleModuleNotFoundError Module named 'ctypes' is not allowed by a rule",
        "RuleModuleNotFoundError Module named 'csv' is not allowed by a rule",
    ]
    logged = _program_denials(denials)
    assert [d["target"] for d in logged] == [
        "[10.255.255.1]:80",
        "[203.0.113.9]:443",
        "ctypes",
        "csv",
    ]
    assert logged[0]["rule"] == "net=DENY|*|10.0.0.0/8|*|OUT"
    assert logged[0]["suggestion"] is None  # no ALLOW line overrides a DENY
    assert logged[1]["suggestion"] == "net=ALLOW|TCP|203.0.113.9|443|OUT"
    assert logged[3]["suggestion"] == "python-import=csv"


def test_code_and_module_programs_are_guarded(home: Path, project: Path) -> None:
    (project / ".py-sandboxes").write_text("expose-ro=.\npython-import=tool\n")
    (project / "tool.py").write_text("import os\n")
    code = "import json"
    for args in (["-c", code], ["-m", "tool"]):
        result = run_sb(["--os-sandbox=subprocess", *args], cwd=project, env=base_env(home))
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "RuleModuleNotFoundError: Module named '" in result.stderr, result.stderr


def test_python_layer_off_runs_unguarded(home: Path, project: Path) -> None:
    (project / ".py-sandboxes").write_text("py-sandbox=false\n")
    result = run_sb(
        ["--os-sandbox=subprocess", "-c", "import csv; print(open('/etc/hostname').read() != '')"],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr


def test_own_modules_in_a_read_only_directory(home: Path, project: Path) -> None:
    """A sibling module imports from a read-only project; the refused bytecode cache write
    is not reported (the import system expects it may fail)."""

    (project / ".py-sandboxes").write_text("expose-ro=.\npython-import=helper\n")
    (project / "helper.py").write_text("VALUE = 42\n")
    (project / "prog.py").write_text("import helper\nprint(helper.VALUE)\n")
    result, denials = _run_prog(project, home)
    assert result.returncode == 0 and result.stdout == "42\n", result.stderr
    assert not (project / "__pycache__").exists()
    assert _program_denials(denials) == []


def test_interpreter_imports_for_builtin_types_need_no_rule(home: Path, project: Path) -> None:
    """What C code imports on behalf of a builtin type is not the program's import: a
    big-integer division (``_pylong`` from CPython 3.12) and ``time.strptime`` (``_strptime``)
    work with no rule for those modules, and nothing is refused. The control: the program's
    own ``import _pydecimal`` (the same kind of pure-Python helper) is refused."""

    (project / ".py-sandboxes").write_text("expose-ro=.\npython-import=time\n")
    (project / "prog.py").write_text(
        "import time\n"
        "print((7**40000 - 1) // (3**40000 - 3) > 0, time.strptime('2024', '%Y').tm_year)\n"
        "try:\n    import _pydecimal\nexcept ModuleNotFoundError as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    result, denials = _run_prog(project, home)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "True 2024\nRuleModuleNotFoundError\n"
    assert [d.get("target") for d in _program_denials(denials)] == ["_pydecimal"]


EXIT_EXEC = (
    "import atexit\natexit.register(exec, \"open('ran', 'w').close()\", {})\nprint('registered')\n"
)


def test_source_run_by_an_exit_function_is_the_programs(home: Path, project: Path) -> None:
    """``atexit.register(exec, source, {})``: the exit functions run after the program, from
    C (``atexit._run_exitfuncs``), called by python-sb's launcher (``end_guarded``), whose frame
    is the first below the call: a string compiled right above it is the program's (the
    review's ``r6_dynamic_code_no_caller_frame.py`` is the same hole in a thread). Plain
    python3 runs the source (the control)."""

    from tests.helpers import run_python

    (project / "prog.py").write_text(EXIT_EXEC)
    plain = run_python(["prog.py"], cwd=project, env=base_env(home))
    assert plain.returncode == 0 and (project / "ran").exists(), plain.stderr
    (project / "ran").unlink()
    (project / ".py-sandboxes").write_text("expose-rw=.\npython-import=atexit\n")
    result, denials = _run_prog(project, home)
    assert result.stdout == "registered\n", result.stderr
    assert not (project / "ran").exists()
    assert [(d["kind"], d["target"]) for d in _program_denials(denials)] == [
        ("api", "builtins.compile")
    ]


EXIT_ERROR = "import atexit\ndef fails():\n    return 1 / 0\natexit.register(fails)\n"


def test_a_traceback_shown_with_no_frame_is_not_dynamic_code(home: Path, project: Path) -> None:
    """CPython's traceback display parses the line it shows (a ``compile`` event, with the
    file's name, for the carets): an exit function's error is shown with no Python frame of
    the program below it, and that is not the program's evaluation -- no refusal, the carets
    shown as python3 shows them."""

    from tests.helpers import run_python

    (project / "prog.py").write_text(EXIT_ERROR)
    plain = run_python(["prog.py"], cwd=project, env=base_env(home))
    (project / ".py-sandboxes").write_text("expose-ro=.\npython-import=atexit\n")
    result, denials = _run_prog(project, home)
    assert "ZeroDivisionError: division by zero" in result.stderr, result.stderr
    assert [line for line in result.stderr.splitlines() if "^" in line] == [
        line for line in plain.stderr.splitlines() if "^" in line
    ]
    assert _program_denials(denials) == []
