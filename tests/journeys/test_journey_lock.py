"""The seed's lock, end to end (SPEC §2.6): with ``learn=false`` in the rule file, every way of
widening it is refused before anything runs, and only ``--pysandboxes-config=`` remains.

Each way is tried twice from a clean directory through the installed command: on the file
without its ``learn=false`` line (the control: that way does widen the rules, the program reads
what it should not), then on the locked file (refused, exit 2, the lock line named, the
program never started).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import base_env, run_sb

RULES = (
    "py-sandbox=true\nos-sandbox=subprocess\nexpose-ro=.\nexpose-rw=./marks\n"
    "python-import=pathlib\n"
)
LOCK = "learn=false\n"
#: The program: it marks that it ran, then reads what its rules do not grant.
PROGRAM = """\
import pathlib, sys
pathlib.Path(sys.argv[1]).touch()
print(pathlib.Path("/etc/hostname").read_text().strip() != "")
"""

WIDENINGS = {
    "--learn": ["--learn"],
    "--learn=FILE": ["--learn=learned.py-sandboxes"],
    "--audit": ["--audit"],
    "a rule option": ["--expose-ro=/etc"],
    "the kernel layer off": ["--os-sandbox=none", "--py-sandbox=false"],
    "an import option": ["--python-import=socket", "--expose-ro=/etc"],
}


def setup(project: Path, *, locked: bool) -> Path:
    """The project's rule file and program; the marker the program touches when it runs."""

    (project / ".py-sandboxes").write_text(RULES + (LOCK if locked else ""))
    (project / "p.py").write_text(PROGRAM)
    (project / "marks").mkdir(exist_ok=True)
    return project / "marks" / "ran"


@pytest.mark.parametrize("way", list(WIDENINGS))
def test_every_option_that_widens_a_locked_file_is_refused(
    way: str, home: Path, project: Path
) -> None:
    marker = setup(project, locked=False)
    args = [*WIDENINGS[way], "p.py", str(marker)]
    control = run_sb(args, cwd=project, env=base_env(home))
    assert control.returncode == 0, control.stderr
    assert control.stdout == "True\n", f"{way} did not widen the unlocked rules"
    marker.unlink()
    for leftover in project.glob("learned.py-sandboxes*"):
        leftover.unlink()

    setup(project, locked=True)
    refused = run_sb(args, cwd=project, env=base_env(home))
    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    assert not marker.exists()
    assert "locked by learn=false at .py-sandboxes(6)" in refused.stderr
    assert refused.stderr.endswith("python-sb: nothing was run\n")
    assert not (project / "learned.py-sandboxes").exists()


def test_a_missing_rule_file_is_refused_under_the_lock(home: Path, project: Path) -> None:
    """A missing file would start learning mode, which allows everything. The lock of a file
    that is gone cannot refuse it: the pinned command line holds it (``--learn=false``, a
    lock given on the command line: it refuses learning and a missing file for that run)."""

    marker = setup(project, locked=True)
    (project / ".py-sandboxes").unlink()  # deleted, by a pull request or a script
    pinned = ["--pysandboxes-config=.py-sandboxes", "p.py", str(marker)]
    control = run_sb(pinned, cwd=project, env=base_env(home))
    assert control.returncode == 0 and "LEARNING" in control.stderr  # everything allowed
    assert control.stdout == "True\n"
    marker.unlink()
    (project / ".py-sandboxes").unlink()  # what that learning run wrote

    refused = run_sb(["--learn=false", *pinned], cwd=project, env=base_env(home))
    assert refused.returncode == 2, refused.stderr
    assert not marker.exists() and not (project / ".py-sandboxes").exists()
    expected = ".py-sandboxes: the rule file is missing: the configuration is locked by learn=false"
    assert expected in refused.stderr


def test_a_learn_line_in_an_included_file_is_refused(home: Path, project: Path) -> None:
    marker = setup(project, locked=True)
    (project / "extra.py-sandboxes").write_text("learn=learned.py-sandboxes\n")
    with (project / ".py-sandboxes").open("a") as handle:
        handle.write('include "extra.py-sandboxes"\n')
    refused = run_sb(["p.py", str(marker)], cwd=project, env=base_env(home))
    assert refused.returncode == 2
    assert "extra.py-sandboxes(1): learn=learned.py-sandboxes (learning) refused" in (
        refused.stderr
    )
    assert not marker.exists()


def test_only_the_choice_of_the_rule_file_remains(home: Path, project: Path) -> None:
    """``--pysandboxes-config=`` is not a rule: it chooses another file, whose own rules
    (and lock) apply. That is why the full command line is pinned where the program runs."""

    marker = setup(project, locked=True)
    (project / "other.py-sandboxes").write_text(RULES + "expose-ro=/etc\n" + LOCK)
    done = run_sb(
        ["--pysandboxes-config=other.py-sandboxes", "p.py", str(marker)],
        cwd=project,
        env=base_env(home),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"


API_PROGRAM = """\
import json, sys
import pysandboxes
from pysandboxes import sandbox, sandboxes
from pysandboxes.errors import ConfigError

@sandbox
def read_hostname():
    import pathlib
    return pathlib.Path("/etc/hostname").read_text().strip() != ""

async def main():
    return read_hostname()

results = {}
for name, options in [
    ("learn", {"learn": True}),
    ("learn to a file", {"learn": "learned.py-sandboxes"}),
    ("keyword rule", {"expose_ro": "/etc"}),
    ("python layer off", {"py_sandbox": "false"}),
]:
    try:
        with sandboxes(**options):
            results[name] = read_hostname()
    except ConfigError as exc:
        results[name] = "refused: " + ("learn=false" in str(exc) and "names the lock" or str(exc))
    except Exception as exc:
        results[name] = type(exc).__name__
try:
    results["run"] = pysandboxes.run(main(), expose_ro="/etc")
except ConfigError as exc:
    results["run"] = "refused: " + ("learn=false" in str(exc) and "names the lock" or str(exc))
print(json.dumps(results))
"""


def test_keyword_rules_of_the_api_are_refused_under_the_lock(project: Path) -> None:
    """Partial mode: ``sandboxes(...)`` and ``run(...)`` keyword rules and ``learn=`` are
    refused under a locked file (the control: unlocked, the keyword rule reads /etc)."""

    (project / "app.py").write_text(API_PROGRAM)
    (project / "marks").mkdir()

    def run(locked: bool) -> dict[str, object]:
        (project / ".py-sandboxes").write_text(RULES + (LOCK if locked else ""))
        done = subprocess.run(
            [sys.executable, "app.py"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    control = run(locked=False)
    assert control["keyword rule"] is True and control["run"] is True
    assert control["python layer off"] is True
    refused = run(locked=True)
    assert refused == {name: "refused: names the lock" for name in refused}, refused
    assert set(refused) == {"learn", "learn to a file", "keyword rule", "python layer off", "run"}
