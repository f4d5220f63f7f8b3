"""python-sb inside real containers (issue 31): podman, rootful and rootless, on an image the
project builds from Debian packages (scripts/container-image.sh, no registry).

- Inside a container python-sb says which providers work and what would enable the others, and
  a run of a provider that cannot work is refused by name (never a silent fallback).
- The hostile corpus (tests/redteam/hostile) runs inside the container under every kernel
  provider that works there: landlock with podman's defaults, bwrap and unshare with the options
  python-sb names; rootless, landlock.
- ``python-sb --export=kubernetes`` renders a Pod that ``podman kube play`` runs: the program's
  output comes back, a read outside the rules fails, an unexposed variable is absent.

Slow (the image: a few minutes the first time on a machine, cached after); needs root.
"""

from __future__ import annotations

import json
import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.containers.conftest import ROOTLESS_USER, podman, repo_copy, writable
from tests.helpers import REPO, base_env, run_sb

pytestmark = [pytest.mark.kernel, pytest.mark.slow, pytest.mark.timeout(900)]

#: Cases of the hostile corpus that do not apply inside these containers, by test name (a
#: prefix): the corpus runs there as uid 65532, and these attacks need a root caller to mean
#: anything, or meet a limit docs/providers/landlock.md announces. Any other skip fails.
NOT_APPLICABLE_INSIDE = (
    # A device node can be made by root only: nothing to refuse for any other caller.
    "test_write_to_device_node_in_read_only_exposure[",
    # Capabilities are held by a root caller only: an unprivileged one has none to drop.
    "test_no_capability_left_to_the_program[",
    # Landlock has no PID namespace: host processes are listed (an announced limit).
    "test_host_processes_stay_hidden_with_root_exposed[landlock-proc_stat.py-",
    # The edge proxy's attacks (issue 32) put the hosts they stand for behind a veth pair,
    # which only root in the host's network namespace can make.
    "test_tls_to_the_refused_address_naming_the_granted_host_reaches_only_it[",
    "test_tls_naming_the_refused_host_is_refused[",
    "test_proxy_requests_lying_in_host_are_judged_by_their_target[",
    "test_bytes_naming_no_host_are_judged_by_address[",
    "test_the_proxy_is_no_way_to_the_hosts_loopback[",
)

#: What python-sb needs from podman for bwrap and unshare, as its own hint says.
NAMESPACE_OPTIONS = ("--security-opt", "unmask=ALL", "--security-opt", "seccomp=unconfined")


def providers_in(image: str, *options: str, user: str | None = None) -> dict[str, dict]:
    done = podman("run", "--rm", *options, image, "--providers", "--json", user=user)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["container"]["runtime"] == "podman"
    return {row["name"]: row for row in data["providers"]}


def test_providers_and_the_option_that_enables_the_others(image: str) -> None:
    rows = providers_in(image)
    assert rows["landlock"]["works"] and rows["subprocess"]["works"]
    for name in ("bwrap", "unshare"):
        assert not rows[name]["works"]
        assert "unmask=ALL" in rows[name]["install_hint"]
    assert not rows["qemu"]["works"]  # no qemu in the image: said, not hidden
    # A refused provider is refused by name, with what works here.
    script = (
        "printf 'os-sandbox=bwrap\\nlearn=false\\n' > /tmp/r.py-sandboxes && "
        "exec python-sb --pysandboxes-config=/tmp/r.py-sandboxes -c pass"
    )
    done = podman("run", "--rm", "--entrypoint", "sh", image, "-c", script)
    assert done.returncode == 2
    assert "os-sandbox=bwrap cannot run here" in done.stderr
    assert "python-sb runs in a podman container" in done.stderr
    assert "these work: none, subprocess, landlock" in done.stderr
    assert "nothing was run" in done.stderr
    # The options of the hint enable them.
    rows = providers_in(image, *NAMESPACE_OPTIONS)
    assert rows["bwrap"]["works"] and rows["unshare"]["works"], rows
    # Half of the hint is not enough, and the next refusal says what is missing.
    rows = providers_in(image, "--security-opt", "unmask=ALL")
    assert not rows["bwrap"]["works"]
    assert "seccomp=unconfined" in rows["bwrap"]["install_hint"]


def test_rootless_container_providers(rootless_image: str) -> None:
    rows = providers_in(rootless_image, "--network=none", user=ROOTLESS_USER)
    assert rows["landlock"]["works"]


def run_corpus(
    image: str,
    repo: Path,
    results: Path,
    selection: str,
    *options: str,
    user: str | None = None,
    as_root_then_drop: bool = False,
) -> ET.Element:
    """The hostile corpus inside the container, as uid 65532; its JUnit report."""

    pytest_argv = (
        "python3 -m pytest -q -p no:cacheprovider tests/redteam/hostile "
        f"-k '{selection}' --junit-xml=/results/corpus.xml"
    )
    mounts = [
        "-v",
        f"{repo}:/src:ro",
        "-v",
        f"{results}:/results",
        "-w",
        "/src",
        "-e",
        "PYTHONDONTWRITEBYTECODE=1",
    ]
    if as_root_then_drop:
        # /dev/net/tun is 0600 on these machines (0666 on most): made usable inside only.
        script = (
            "chmod 0666 /dev/net/tun && exec setpriv --reuid=65532 --regid=65532 "
            f"--clear-groups {pytest_argv}"
        )
        argv = [
            "run",
            "--rm",
            "--user",
            "0",
            "--device",
            "/dev/net/tun",
            "--sysctl",
            "net.ipv4.ip_unprivileged_port_start=0",
            *options,
            *mounts,
            "--entrypoint",
            "sh",
            image,
            "-c",
            script,
        ]
    else:
        argv = ["run", "--rm", *options, *mounts, "--entrypoint", "sh", image, "-c", pytest_argv]
    done = podman(*argv, user=user, timeout=900)
    report = results / "corpus.xml"
    assert report.exists(), f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    root = ET.parse(report).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    failures = [
        case.get("name", "") + ": " + (problem.get("message") or "")[:300]
        for case in suite.iter("testcase")
        for problem in (case.find("failure"), case.find("error"))
        if problem is not None
    ]
    skipped = []
    for case in suite.iter("testcase"):
        skip = case.find("skipped")
        name = case.get("name", "")
        if skip is None or skip.get("type") == "pytest.xfail":
            continue
        if not name.startswith(NOT_APPLICABLE_INSIDE):
            skipped.append(f"{name}: {skip.get('message') or ''}")
    assert not failures, "\n".join(failures)
    assert not skipped, "\n".join(skipped)
    return suite


def passed(suite: ET.Element, provider: str) -> int:
    return sum(
        1
        for case in suite.iter("testcase")
        if f"[{provider}" in case.get("name", "") and not list(case)
    )


def test_hostile_corpus_inside_podman_under_landlock(image: str, world_dir: Path) -> None:
    suite = run_corpus(image, REPO, writable(world_dir / "results"), "landlock")
    assert passed(suite, "landlock") >= 15


def test_hostile_corpus_inside_podman_under_namespace_providers(
    image: str, world_dir: Path
) -> None:
    suite = run_corpus(
        image,
        REPO,
        writable(world_dir / "results"),
        "bwrap or unshare",
        *NAMESPACE_OPTIONS,
        as_root_then_drop=True,
    )
    assert passed(suite, "bwrap") >= 15 and passed(suite, "unshare") >= 15


def test_hostile_corpus_inside_rootless_podman_under_landlock(
    rootless_image: str, world_dir: Path
) -> None:
    repo = repo_copy(world_dir)
    suite = run_corpus(
        rootless_image,
        repo,
        writable(world_dir / "results"),
        "landlock",
        "--network=none",
        user=ROOTLESS_USER,
    )
    assert passed(suite, "landlock") >= 15


PROGRAM = """\
import os
print("greeting:", os.environ.get("GREETING"))
print("variables:", ",".join(sorted(os.environ)))
print("data:", open("app/data.csv").read().strip())
with open("out/result.txt", "w") as handle:
    handle.write("written")
print("wrote out/result.txt")
try:
    open("/etc/shadow").read()
    print("READ /etc/shadow")
except OSError as exc:
    print("refused /etc/shadow", type(exc).__name__)
try:
    open("/usr/escape.txt", "w")
    print("WROTE /usr")
except OSError as exc:
    print("refused /usr", type(exc).__name__)
"""


def test_rendered_pod_runs_under_podman_kube_play(image: str, world_dir: Path, home: Path) -> None:
    project = world_dir / "project"
    (project / "app").mkdir(parents=True)
    (project / "out").mkdir()
    (project / "app" / "main.py").write_text(PROGRAM)
    (project / "app" / "data.csv").write_text("region,total\n")
    (project / ".py-sandboxes").write_text(
        "os-sandbox=landlock\nlearn=false\nexpose-ro=./app\nexpose-rw=./out\n"
        "python-import=os\nenv=GREETING=${GREETING:-hello from the rules}\n"
    )
    for path in (project, project / "app"):
        os.chmod(path, 0o755)
    name = f"pysb-kube-{os.getpid()}"
    env = base_env(home, {"SECRET_OF_THE_HOST": "s3cr3t"})
    done = run_sb(
        [
            "--export=kubernetes",
            f"--image={image}",
            f"--name={name}",
            "--workdir=/work",
            f"--mount=./app=hostPath:{project / 'app'}",
            "--output=pod.yaml",
            "app/main.py",
        ],
        cwd=project,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    manifest = project / "pod.yaml"
    try:
        play = podman("kube", "play", str(manifest))
        assert play.returncode == 0, play.stderr
        container = f"{name}-program"
        deadline = time.monotonic() + 300
        state = ""
        while time.monotonic() < deadline:
            state = podman("inspect", "--format", "{{.State.Status}}", container).stdout.strip()
            if state == "exited":
                break
            time.sleep(1)
        assert state == "exited", state
        logs = podman("logs", container)
        output = logs.stdout + logs.stderr
        code = podman("inspect", "--format", "{{.State.ExitCode}}", container).stdout.strip()
        assert code == "0", output
        assert "greeting: hello from the rules" in output
        variables = output.split("variables: ", 1)[1].splitlines()[0].split(",")
        assert "GREETING" in variables
        assert not {"SECRET_OF_THE_HOST", "HOME", "PATH", "HOSTNAME"} & set(variables), variables
        assert "data: region,total" in output
        assert "wrote out/result.txt" in output
        assert "refused /etc/shadow" in output
        assert "refused /usr" in output and "WROTE" not in output and "READ /etc" not in output
    finally:
        podman("kube", "down", str(manifest))
