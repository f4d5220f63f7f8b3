"""Fixtures shared by every test; helpers live in ``tests/helpers.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """An empty HOME, so that no real user profile leaks into a test."""

    path = tmp_path / "home"
    path.mkdir()
    yield path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory to hold a rule file and programs."""

    path = tmp_path / "project"
    path.mkdir()
    return path
