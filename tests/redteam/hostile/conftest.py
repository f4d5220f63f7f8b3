"""Parametrize every hostile test over the kernel providers built into this version.

A test that takes the ``kernel_provider`` fixture runs once per provider of
``KERNEL_PROVIDERS`` whose module exists; a provider that cannot run on this machine is skipped
with its reason and what to install (a failure under ``PYSANDBOXES_REQUIRE_ALL=1``).
"""

from __future__ import annotations

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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "kernel_provider" in metafunc.fixturenames:
        metafunc.parametrize("kernel_provider", built_providers(), indirect=True)


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
