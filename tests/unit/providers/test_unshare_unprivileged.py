"""bwrap and unshare run by an unprivileged user (what most users are), through the providers.

Needs root to switch to ``nobody`` (``setpriv``) and a system interpreter ``nobody`` can run
(the test environment's own may live under an unreadable home); skipped otherwise. The network
part is tested with ``/dev/net/tun`` usable by ``nobody`` (0666, as distributions ship it)
and not (0600, as some container images do): the tests set the mode they need for their
duration (root only, under a lock shared by the test processes) and restore it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO, require

DRIVER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
from pysandboxes.policy.model import ARG, PathRule, Policy
from pysandboxes.policy.netrules import parse_net
from pysandboxes.providers import get_provider
from pysandboxes.providers.base import Launch
from pysandboxes.runtime import RunContext
work, provider = sys.argv[2], sys.argv[3]
net = tuple(parse_net(text, ARG) for text in sys.argv[4:])
policy = Policy(expose_rw=(PathRule("expose-rw", work, ARG),), net=net)
context = RunContext(cwd=work, tmpdir=work, python=sys.executable, prefixes=("/usr",))
probe = (
    "import json, os, socket\n"
    "open('written', 'w').write('x')\n"
    "print(json.dumps({'uid': os.getuid(), 'pid': os.getpid(), 'host': socket.gethostname(),"
    " 'root': sorted(os.listdir('/')), 'etc_shadow': os.path.exists('/etc/shadow')}))\n"
)
launch = Launch(policy, context, (sys.executable, "-I", "-c", probe), {"PATH": "/usr/bin"},
                cwd=work)
impl = get_provider(provider)
state = impl.availability()
if not state.ok:
    print(json.dumps({"unavailable": state.reason}))
    sys.exit(0)
prepared = impl.prepare(launch)
pid = os.fork()
if pid == 0:
    for step in prepared.pre_exec:
        step()
    os.execve(prepared.argv[0], prepared.argv, prepared.env)
_, status = os.waitpid(pid, 0)
for step in prepared.cleanup:
    step()
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory nobody can reach (pytest's own temporary root is private to root)."""

    path = Path(tempfile.mkdtemp(prefix="pysb-nobody-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_as_nobody(tmp_path: Path, provider: str, *net: str) -> dict[str, object]:
    if os.geteuid() != 0:
        # Not a missing tool or kernel feature: the suite itself runs unprivileged, which is
        # what this test would check. Skipped even in CI.
        pytest.skip("switching to nobody needs root; the suite already runs unprivileged")
    setpriv = shutil.which("setpriv")
    require(setpriv, "setpriv not found (apt-get install util-linux)")
    python = "/usr/bin/python3"
    require(os.access(python, os.X_OK), "no system /usr/bin/python3 for nobody")
    work = tmp_path / "work"
    work.mkdir()
    os.chmod(work, 0o777)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    os.chmod(driver, 0o644)
    result = subprocess.run(
        [
            str(setpriv),
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "env",
            f"HOME={work}",
            python,
            str(driver),
            str(REPO / "src"),
            str(work),
            provider,
            *net,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    require(
        "unavailable" not in data, f"os-sandbox={provider} as nobody: {data.get('unavailable')}"
    )
    assert (work / "written").read_text() == "x"
    assert (work / "written").stat().st_uid == 65534  # written as the user, not as root
    return data


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_unprivileged_user_gets_the_same_sandbox(shared_dir: Path, provider: str) -> None:
    data = run_as_nobody(shared_dir, provider)
    assert data["uid"] == 65534 and data["pid"] == 2 and data["host"] == "python-sb"
    assert data["etc_shadow"] is False and "root" not in data["root"]


@contextlib.contextmanager
def tun_mode(mode: int) -> Iterator[None]:
    """``/dev/net/tun`` with permission ``mode`` for the duration (root only), then as it was;
    the tests of this module that change it take turns on one lock (``pytest -n``)."""

    require(os.geteuid() == 0, "changing /dev/net/tun's mode needs root")
    with open(os.path.join(tempfile.gettempdir(), "pysb-tests-tun.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        before = os.stat("/dev/net/tun").st_mode & 0o7777
        os.chmod("/dev/net/tun", mode)
        try:
            yield
        finally:
            os.chmod("/dev/net/tun", before)


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_unprivileged_user_with_net_rules(shared_dir: Path, provider: str) -> None:
    with tun_mode(0o666):  # as distributions ship it
        data = run_as_nobody(shared_dir, provider, "ALLOW|TCP|127.0.0.1|5432|OUT")
    assert data["uid"] == 65534 and data["pid"] == 2


def test_unusable_tun_device_is_reported(shared_dir: Path) -> None:
    require(os.geteuid() == 0, "switching to nobody needs root")
    work = shared_dir / "work"
    work.mkdir()
    os.chmod(work, 0o777)
    driver = shared_dir / "driver.py"
    driver.write_text(DRIVER)
    os.chmod(driver, 0o644)
    with tun_mode(0o600):  # as some container images ship it
        result = subprocess.run(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "/usr/bin/python3",
                str(driver),
                str(REPO / "src"),
                str(work),
                "unshare",
                "ALLOW|TCP|127.0.0.1|5432|OUT",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert result.returncode != 0
    assert "ProviderUnavailableError" in result.stderr
    assert "net= rules need /dev/net/tun" in result.stderr
