"""Fixtures of the container tests: python-sb's image, built by scripts/container-image.sh from
Debian packages (no registry), and the unprivileged user of the rootless runs."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO, require, require_tool

CONF = Path(__file__).resolve().parent / "containers.conf"
IMAGE = "localhost/python-sb:test"
#: The user scripts/setup.sh creates for rootless podman (subordinate ids in /etc/subuid).
ROOTLESS_USER = "python-sb-rootless"


def podman_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["CONTAINERS_CONF"] = str(CONF)
    env.pop("PYSANDBOXES_REQUIRE_ALL", None)
    env.update(extra or {})
    return env


def podman(
    *args: str,
    user: str | None = None,
    timeout: float = 600,
    check: bool = False,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    argv = ["podman", *args]
    env = podman_env()
    if user is not None:
        home = pwd.getpwnam(user).pw_dir
        env = {
            "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": home,
            "USER": user,
            "CONTAINERS_CONF": str(CONF),
            "LANG": "C.UTF-8",
        }
        argv = ["runuser", "-u", user, "--", *argv]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
        input=input,
        cwd="/",
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr}")
    return done


@pytest.fixture(scope="session")
def image() -> str:
    for tool, package in (
        ("podman", "podman"),
        ("mmdebstrap", "mmdebstrap"),
        ("runc", "runc"),
        ("catatonit", "catatonit"),
    ):
        require_tool(tool, package)
    require(os.geteuid() == 0, "the container tests build and run images as root")
    import fcntl

    # One build at a time on the machine (pytest-xdist's workers each ask for the image): the
    # second waits, then finds the cached base and an up-to-date image.
    with open("/tmp/python-sb-container-image.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            [str(REPO / "scripts" / "container-image.sh")],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
            env=podman_env({"PYSANDBOXES_IMAGE": IMAGE}),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    return IMAGE


@pytest.fixture(scope="session")
def rootless_image(image: str) -> Iterator[str]:
    """The same image in the rootless user's storage (podman save | podman load)."""

    try:
        pwd.getpwnam(ROOTLESS_USER)
    except KeyError:
        require(False, f"no user {ROOTLESS_USER} for rootless podman (scripts/setup.sh makes it)")
    require_tool("newuidmap", "uidmap")
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="pysb-image-", dir="/tmp"))
    try:
        os.chmod(folder, 0o755)
        archive = folder / "image.tar"
        podman("save", "-q", "-o", str(archive), image, check=True)
        os.chmod(archive, 0o644)
        podman("load", "-q", "-i", str(archive), user=ROOTLESS_USER, check=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    yield image


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A directory every user can traverse (pytest's own temporary root is private to root, and
    rootless podman runs as another user): for mounts and results."""

    import tempfile

    path = Path(tempfile.mkdtemp(prefix="pysb-containers-", dir="/tmp"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def writable(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o777)
    return path


def repo_copy(parent: Path) -> Path:
    """The repository's src/ and tests/ (and pyproject.toml), readable by every user."""

    target = parent / "repo"
    target.mkdir()
    for part in ("src", "tests", "pyproject.toml"):
        source = REPO / part
        if source.is_dir():
            shutil.copytree(
                source, target / part, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
            )
        else:
            shutil.copy2(source, target / part)
    for root, dirs, files in os.walk(target):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    os.chmod(target, 0o755)
    return target
