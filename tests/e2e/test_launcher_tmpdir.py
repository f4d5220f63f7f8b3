"""The private temporary directory of a run is gone when the run ends (SPEC §3.1).

The program fills its ``TMPDIR`` (files and a subdirectory), then ends normally, by an uncaught
exception or by ``sys.exit``. The host's ``TMPDIR`` points to a directory of the test's own, so
that what remains there is this run's and nobody else's.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.helpers import base_env, require, run_sb

PROGRAM = textwrap.dedent(
    """\
    import os, sys
    tmp = os.environ["TMPDIR"]
    print(tmp, flush=True)
    os.mkdir(os.path.join(tmp, "sub"))
    with open(os.path.join(tmp, "sub", "deep.txt"), "w") as handle:
        handle.write("x")
    with open(os.path.join(tmp, "top.txt"), "w") as handle:
        handle.write("x")
    if sys.argv[1] == "raise":
        raise ValueError("the program failed")
    if sys.argv[1] == "exit":
        sys.exit(3)
    """
)

ENDINGS = {"normal": 0, "raise": 1, "exit": 3}


def _run(project: Path, home: Path, base: Path, options: list[str], ending: str) -> Path:
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\npython-import=os\n")
    (project / "prog.py").write_text(PROGRAM)
    env = base_env(home, {"TMPDIR": str(base)})
    result = run_sb([*options, "prog.py", ending], cwd=project, env=env, timeout=60)
    assert result.returncode == ENDINGS[ending], result.stderr
    private = Path(result.stdout.strip())
    assert private.parent == base and private.name.startswith("pysb-"), result.stdout
    return private


@pytest.mark.parametrize(
    "options",
    [
        ["--os-sandbox=subprocess"],
        ["--os-sandbox=subprocess", "--py-sandbox=false"],
        ["--os-sandbox=none"],
    ],
    ids=["subprocess-guarded", "subprocess-unguarded", "none-guarded"],
)
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_private_tmpdir_is_removed(
    tmp_path: Path, project: Path, home: Path, options: list[str], ending: str
) -> None:
    base = tmp_path / "hosttmp"
    base.mkdir()
    _run(project, home, base, options, ending)
    assert sorted(p.name for p in base.iterdir()) == []


@pytest.mark.kernel
@pytest.mark.parametrize("python_layer", ["true", "false"])
def test_landlock_empties_it_and_the_next_run_sweeps_it(
    tmp_path: Path, project: Path, home: Path, python_layer: str
) -> None:
    """Under Landlock the child empties its directory but cannot remove the directory itself:
    that needs the remove-directory right on the host's temporary directory, which no
    sandboxed program gets. The empty directory, named by the pid of a process that has ended,
    is removed by the next run's sweep (``launch/tmpdir.py``)."""

    from pysandboxes.providers import get_provider

    available = get_provider("landlock").availability()  # not here when portable is forced
    require(available.ok, f"Landlock unavailable: {available.reason}")
    base = tmp_path / "hosttmp"
    base.mkdir()
    options = ["--os-sandbox=landlock", f"--py-sandbox={python_layer}"]
    left = [_run(project, home, base, options, ending) for ending in ENDINGS]
    for private in left[:-1]:  # each swept by the run after it
        assert not private.exists()
    last = left[-1]
    assert not last.exists() or list(last.iterdir()) == []
    assert [p for p in base.iterdir() if p != last] == []
