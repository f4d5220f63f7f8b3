"""``python-sb --providers`` and the container hints (issue 31): what works here, said by each
provider's own probe, and the runtime option that would enable the others. Inside real
containers: tests/containers/test_podman.py."""

from __future__ import annotations

import json
from pathlib import Path

from pysandboxes.policy.model import PROVIDERS
from pysandboxes.providers import _container
from tests.helpers import base_env, run_sb


def test_providers_lists_every_provider_with_its_own_answer(tmp_path: Path, home: Path) -> None:
    done = run_sb(["--providers", "--json"], cwd=tmp_path, env=base_env(home))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [row["name"] for row in data["providers"]] == list(PROVIDERS)
    for row in data["providers"]:
        assert row["works"] or row["reason"]  # a provider that cannot run says why
    text = run_sb(["--providers"], cwd=tmp_path, env=base_env(home))
    assert text.returncode == 0
    assert all(name in text.stdout for name in PROVIDERS)
    bad = run_sb(["--providers", "--yaml"], cwd=tmp_path, env=base_env(home))
    assert bad.returncode == 2 and "unknown argument" in bad.stderr


def test_container_is_described_and_hints_name_the_runtime_option() -> None:
    podman = _container.Container("podman", "/run/.containerenv", rootless=True, seccomp=2)
    assert podman.describe() == "a podman container (rootless; /run/.containerenv)"
    assert "unmask=ALL" in _container.runtime_hint("proc", podman)
    assert "seccomp=unconfined" in _container.runtime_hint("seccomp-ns", podman)
    docker = _container.Container("docker", "/.dockerenv")
    assert "systempaths=unconfined" in _container.runtime_hint("proc", docker)
    kube = _container.Container("kubernetes", "KUBERNETES_SERVICE_HOST")
    assert "procMount: Unmasked" in _container.runtime_hint("proc", kube)
    assert _container.runtime_hint("proc", _container.Container("", "")) == ""


def test_detect_reads_the_runtime_markers() -> None:
    found = _container.detect({"KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert found.runtime == "kubernetes"
    # Whatever this machine is, the answer names its evidence when it names a runtime.
    here = _container.detect({})
    assert bool(here) == bool(here.evidence)
