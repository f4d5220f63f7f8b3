"""Every test of the real-world suite carries the ``realworld`` marker: CI runs it, a local run
can leave it out with ``-m 'not realworld'`` (a few minutes on two cores)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.realworld)
