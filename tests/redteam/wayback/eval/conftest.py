"""Each test module ends the warm workers of ``guarded_eval`` it started: they are the test
process's children, and a later test may count on having none (``os.wait()``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _end_eval_workers() -> Iterator[None]:
    yield
    from pysandboxes.evalguard.worker import WORKER

    WORKER.close()
