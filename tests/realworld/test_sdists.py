"""Real projects nobody here wrote: their own test suites, learned then replayed everywhere.

For each pinned sdist of ``sdists.txt`` (fetched by ``scripts/setup.sh``): two copies of the
unpacked sdist; in one, ``python -m pytest`` under plain python (the control); in the other,
``python-sb --learn=.py-sandboxes -m pytest``, the learned file locked (``learn=false``) and the
same command replayed under ``subprocess``, ``landlock``, ``bwrap`` and ``unshare`` with the
Python layer on. Every run must end with the control's status and pytest counts, and no replay
may be refused anything. The learned file must be what a reviewer expects
(``harness.check_reviewable``, and the project's own modules among its imports).

The projects run from their source tree, as their developers run them (``-o pythonpath=src``
for a ``src`` layout); a few large suites run a part of their test files, to keep the suite
within CI's time budget, and options that only make a run depend on the machine are given
(``-o filterwarnings=`` where a project's configuration turns every warning of a newer
pytest into an error).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import require
from tests.realworld import harness

PYTEST = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no"]


@dataclass
class Project:
    name: str
    #: Arguments after ``python -m pytest -q -p no:cacheprovider --color=no``.
    args: list[str]
    #: Top-level modules of the project: the learned file must grant their import.
    modules: set[str]
    #: The sensitive calls the project's tests make (``python-api=ALLOW:...``), beyond
    #: pytest's own: the learned file must grant these and nothing more.
    apis: set[str] = field(default_factory=set)
    #: System paths outside the project the tests need read-only: the executables they start,
    #: the data their child processes read.
    system: tuple[str, ...] = ()


#: What running pytest itself needs: its fault handler, and ``marshal.loads`` of the byte code
#: of installed modules read by the import system.
PYTEST_APIS = {"faulthandler.enable", "marshal.loads"}

PROJECTS = [
    Project(
        "attrs",
        [
            "-o",
            "pythonpath=src",
            "tests/test_validators.py",
            "tests/test_filters.py",
            "tests/test_cmp.py",
            "tests/test_setattr.py",
        ],
        {"attr"},
        # compile: attrs generates its classes' methods; pickle: the tests round-trip instances.
        {"builtins.compile", "pickle.loads"},
    ),
    # ctypes.CDLL: freezegun, the time-freezing test dependency, loads the C library.
    Project(
        "humanize",
        ["-o", "pythonpath=src", "-o", "filterwarnings=", "tests"],
        {"humanize"},
        {"ctypes.CDLL"},
    ),
    Project("idna", ["tests"], {"idna"}),
    Project("inflection", ["test_inflection.py"], {"inflection"}),
    # gc.get_objects: its leak test counts the live objects.
    Project("markupsafe", ["-o", "pythonpath=src", "tests"], {"markupsafe"}, {"gc.get_objects"}),
    Project(
        "more-itertools",
        ["tests"],
        {"more_itertools"},
        {"pickle.loads", "threading.Thread.start"},
    ),
    Project("pyparsing", ["tests/test_simple_unit.py"], {"pyparsing"}, {"object.__getattr__"}),
    Project(
        "python-dateutil",
        [
            "-o",
            "pythonpath=src",
            "-o",
            "filterwarnings=",
            "tests/test_relativedelta.py",
            "tests/test_easter.py",
            "tests/test_rrule.py",
            "tests/test_parser.py",
        ],
        {"dateutil"},
    ),
    # dbm.ndbm exists only where CPython was built with it: a result of the machine.
    Project(
        "six",
        ["test_six.py", "--deselect", "test_six.py::test_move_items[dbm_ndbm]"],
        {"six"},
        {"builtins.compile", "object.__getattr__", "subprocess.getoutput"},
        ("/bin/sh",),  # subprocess.getoutput runs the shell
    ),
    # Its command-line tests run `python -m tabulate` in a child process, whose argparse looks up
    # message catalogues under /usr/share/locale. Its tests use numpy and pandas when they are
    # importable (the kernel extra of setup.sh installs both), and importing ctypes, as numpy
    # does, opens the interpreter's own library (ctypes.pythonapi = PyDLL(None)): ctypes.CDLL.
    Project(
        "tabulate",
        ["test"],
        {"tabulate"},
        {"subprocess.Popen", "ctypes.CDLL"},
        ("/usr/share/locale",),
    ),
    Project(
        "toolz",
        ["toolz/tests"],
        {"toolz"},
        {
            "builtins.compile",
            "importlib.reload",
            "object.__getattr__",
            "pickle.loads",
            "sys.settrace",
        },
    ),
]


@pytest.mark.kernel
@pytest.mark.timeout(600)  # six runs of a whole suite on a loaded machine
@pytest.mark.slow
@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_a_real_test_suite_learns_and_replays_everywhere(
    project: Project, tmp_path: Path, home: Path
) -> None:
    source = harness.unpack(project.name, tmp_path / "sdist")
    control = shutil.copytree(source, tmp_path / "control")
    tree = shutil.copytree(source, tmp_path / "learned")
    env = harness.run_env(home)
    args = [*PYTEST, *project.args]

    status, output = harness.plain(args, control, env)
    expected = harness.pytest_counts(output)
    assert expected.get("passed", 0) > 0, output[-3000:]

    learned_out, rules = harness.learn(args, tree, env, tree / ".py-sandboxes")
    assert harness.pytest_counts(learned_out) == expected, learned_out[-3000:]
    harness.check_reviewable(rules, env, system=project.system)
    missing = project.modules - rules.imports()
    assert not missing, f"imports not learned: {missing}\n{rules.text}"
    # no sensitive call the suite was not seen to make (which of pytest's own calls a run makes
    # depends on the plugins and caches in play, so the observed set is an upper bound)
    assert rules.apis() <= PYTEST_APIS | project.apis, rules.text

    problems = []
    for provider in harness.PROVIDERS:
        unavailable = harness.provider_available(provider)
        if unavailable:
            problems.append(unavailable)
            continue
        run = harness.replay(provider, args, tree, env, tmp_path / f"denials-{provider}.jsonl")
        if run.returncode != status:
            problems.append(f"{provider}: status {run.returncode}, not {status}:\n{run.stderr}")
        elif run.refused:
            problems.append(f"{provider}: refused {run.refused}")
        elif harness.pytest_counts(run.stdout) != expected:
            problems.append(f"{provider}: {harness.pytest_counts(run.stdout)} != {expected}")
    require(not any(p.startswith("os-sandbox=") for p in problems), "; ".join(problems))
    assert not problems, "\n".join(problems) + "\n" + rules.text
