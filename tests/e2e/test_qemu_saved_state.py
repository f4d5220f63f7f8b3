"""The saved VM state of os-sandbox=qemu, end to end: restored runs get fresh randomness and the
host's clock, a state that cannot be restored boots cold and says so, a stale one is renewed, the
file is owner-only, ``qemu.saved-state=false`` leaves it alone (docs/providers/qemu.md, "Saved
state").

The states live in the kernel cache (``/var/cache/python-sb/qemu/states`` for root, else under
the test's HOME). Each test learns the path of its configuration's state from the line of the run
that saves or renews it: :func:`state_path` first ages every state there, so that run renews it.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path

import pytest

from tests.helpers import base_env, require, run_sb

pytestmark = [pytest.mark.kernel, pytest.mark.slow]
TIMEOUT = 240
PROGRAM = "import json, os, time; print(json.dumps([os.urandom(16).hex(), time.time()]))\n"
SAVED = re.compile(
    r"python-sb: qemu: (?:saving the booted VM's state into|renewing the saved VM "
    r"state) (/\S+\.vmstate)"
)


@pytest.fixture(autouse=True)
def qemu_tcg_available() -> None:
    from pysandboxes.providers import get_provider
    from pysandboxes.providers.qemu import choose_accelerator

    availability = get_provider("qemu").availability()
    require(availability.ok, f"os-sandbox=qemu: {availability.reason}")
    if choose_accelerator("auto")[0] != "tcg":
        # Nothing is missing: under KVM runs boot cold by design (no saved state).
        pytest.skip("KVM works here: the saved state is used under TCG only")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def states_dir(home: Path) -> Path:
    if os.geteuid() == 0:
        return Path("/var/cache/python-sb/qemu/states")
    return home / ".cache" / "python-sb" / "qemu" / "states"


def project_with(tmp_path: Path, *lines: str) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    rules = ["os-sandbox=qemu", f"expose-ro={project}", "py-sandbox=false", *lines]
    (project / ".py-sandboxes").write_text("".join(f"{line}\n" for line in rules))
    (project / "prog.py").write_text(PROGRAM)
    return project


def run(project: Path, home: Path) -> tuple[str, float, str]:
    """One run of the program: (its random bytes, its clock minus the host's, stderr)."""

    result = run_sb(["prog.py"], cwd=project, env=base_env(home), timeout=TIMEOUT)
    host = time.time()
    assert result.returncode == 0, result.stderr
    random, guest = json.loads(result.stdout)
    return random, guest - host, result.stderr


def state_path(project: Path, home: Path) -> tuple[Path, str]:
    """Age every saved state, run once (that run renews or saves this configuration's state):
    the state's path, and the run's random bytes."""

    folder = states_dir(home)
    if folder.is_dir():
        old = time.time() - 3 * 24 * 3600
        for entry in folder.glob("*.vmstate"):
            os.utime(entry, (old, old))
    random, _, errors = run(project, home)
    found = SAVED.search(errors)
    assert found, errors
    path = Path(found.group(1))
    assert path.is_file(), errors
    return path, random


def restore_lines(errors: str) -> list[str]:
    return [line for line in errors.splitlines() if "saved VM state" in line or "saving" in line]


def test_restored_runs_get_fresh_randomness_the_hosts_clock_and_an_owner_only_state(
    tmp_path: Path, home: Path
) -> None:
    project = project_with(tmp_path)
    path, first = state_path(project, home)
    info = path.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    draws = [first]
    for _ in range(2):
        random, skew, errors = run(project, home)
        assert restore_lines(errors) == [], errors  # restored: nothing built, nothing said
        # The state holds the snapshot's clock: the guest's is set from the host's at each run.
        assert abs(skew) < 5, skew
        draws.append(random)
    assert path.stat().st_ino == info.st_ino  # the same state restored twice
    # Every restore starts from the same generator state: the host's bytes reseed it.
    assert len(set(draws)) == 3, draws


def test_a_corrupt_state_boots_cold_and_says_so(tmp_path: Path, home: Path) -> None:
    project = project_with(tmp_path)
    path, _ = state_path(project, home)
    header = path.read_bytes().split(b"\n", 1)[0] + b"\n"
    # A valid header over a stream qemu cannot load: the relay falls back to a cold boot.
    path.write_bytes(header + os.urandom(4096))
    _, _, errors = run(project, home)
    said = restore_lines(errors)
    assert len(said) == 1 and "could not be restored" in said[0] and "booting cold" in said[0]
    assert not path.exists()  # dropped: the next run saves a new one
    # A file that is not a state at all: refused before qemu starts, saved anew by that run.
    path.write_bytes(b"garbage\n")
    path.chmod(0o600)
    _, _, errors = run(project, home)
    said = restore_lines(errors)
    assert len(said) == 1 and "is unusable" in said[0] and "booting cold" in said[0], errors
    assert path.read_bytes().startswith(header)


def test_other_configurations_and_the_switch_leave_the_state_alone(
    tmp_path: Path, home: Path
) -> None:
    project = project_with(tmp_path)
    path, _ = state_path(project, home)
    # Unusable as it is: a run that consulted it would say so and replace it.
    path.write_bytes(b"garbage\n")
    path.chmod(0o600)
    before = path.stat()
    for setting in ("qemu.saved-state=false", "qemu.memory=384M"):
        project_with(tmp_path, setting)
        _, skew, errors = run(project, home)
        assert restore_lines(errors) == [], errors
        assert abs(skew) < 5, skew  # a cold boot's clock comes from the host too
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert path.read_bytes() == b"garbage\n"
    path.unlink()  # the next run saves a good one
