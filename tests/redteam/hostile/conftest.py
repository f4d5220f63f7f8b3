"""Parametrize every hostile test over the kernel providers built into this version.

A test that takes the ``kernel_provider`` fixture runs once per provider of
``KERNEL_PROVIDERS`` whose module exists; a provider that cannot run on this machine is skipped
with its reason and what to install (a failure under ``PYSANDBOXES_REQUIRE_ALL=1``).

``qemu`` boots a VM per run (seconds under software emulation): by default only the tests of
:data:`QEMU_SUBSET` run under it (one attack per family: files, processes, sockets, and the
legitimate-use control); ``PYSANDBOXES_QEMU_ALL=1`` (or ``-m qemu_all``-style selection of the
``qemu_all`` marker) runs the whole corpus under qemu.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy.model import KERNEL_PROVIDERS
from pysandboxes.providers import get_provider
from tests.helpers import require
from tests.redteam.hostile.harness import Scene, make_scene


def built_providers() -> list[str]:
    """Kernel providers whose module exists in this version of python-sb."""

    names = []
    for name in KERNEL_PROVIDERS:
        try:
            get_provider(name)
        except ConfigError:
            continue
        names.append(name)
    return names


#: The hostile tests that run under ``qemu`` by default (the whole corpus runs with
#: ``PYSANDBOXES_QEMU_ALL=1``).
QEMU_SUBSET = frozenset(
    {
        "test_read_outside_exposures[qemu-read_open.py]",
        "test_write_into_read_only_exposure[qemu]",
        "test_read_host_process_environ[qemu]",
        "test_connect_tcp_port_no_rule_grants[qemu]",
        "test_leave_set_id_file_in_writable_exposure[qemu-chmod]",
    }
)
QEMU_ALL = os.environ.get("PYSANDBOXES_QEMU_ALL") == "1"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "kernel_provider" in metafunc.fixturenames:
        params = [
            pytest.param(name, marks=pytest.mark.qemu_all) if name == "qemu" else name
            for name in built_providers()
        ]
        metafunc.parametrize("kernel_provider", params, indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under qemu, only :data:`QEMU_SUBSET` unless the whole corpus is asked for: the others
    are deselected (reported as such), never skipped -- a skip in CI means a missing tool."""

    if QEMU_ALL:
        return
    kept, dropped = [], []
    for item in items:
        outside = item.get_closest_marker("qemu_all") and item.name not in QEMU_SUBSET
        (dropped if outside else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def kernel_provider(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    available = get_provider(name).availability()
    require(
        available.ok,
        f"os-sandbox={name} cannot run here: {available.reason} ({available.install_hint})",
    )
    if name == "landlock":
        from pysandboxes.providers.landlock import landlock_abi

        require(
            landlock_abi() >= 4,
            f"Landlock ABI {landlock_abi()} cannot restrict TCP (ABI 4, Linux 6.7): python-sb "
            "refuses this corpus's rules with py-sandbox=false there",
        )
    return name


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    yield from make_scene(tmp_path)
