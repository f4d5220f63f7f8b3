"""``guarded_eval(rules=...)`` leaves nothing in the temporary directory and names the
caller's rules as ``<arg>`` (issue 26 defect 11): the spawned worker's rules are passed as
rules (their origin the caller's argument), its rule file is removed once read, and its
folder when the backend closes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from pysandboxes.evalguard.api import resolve
from pysandboxes.evalguard.worker import WorkerBackend
from tests.redteam.eval.processes import kill_tree

RULES = ["eval-syntax=arith,compare", "eval-call=len", "eval-timeout=30s"]


def _leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.glob("pysb-*-eval-*/**/*"))


def test_no_rule_file_is_left_and_the_worker_restarts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    backend = WorkerBackend()
    rules = resolve(None, RULES)
    try:
        assert backend.run("len('abc') + 1", "eval", None, rules) == 4
        # the worker's folder, named for the sweep of a later run (launch/tmpdir.owned_prefix)
        assert len(list(tmp_path.glob("pysb-*-eval-*"))) == 1
        assert _leftovers(tmp_path) == []  # the worker runs; its rule file is gone
        # a new worker needs no file either (the next call once the killed worker has ended:
        # a request sent to a worker still dying is lost with it, EvalWorkerError)
        kill_tree(backend.pid(rules))
        assert backend.run("2 * 21", "eval", None, rules) == 42
        assert _leftovers(tmp_path) == []
    finally:
        backend.close()
    assert list(tmp_path.glob("pysb-*-eval-*")) == []  # and the folder goes at close


def test_the_worker_rules_are_the_callers_and_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    backend = WorkerBackend()
    rules = resolve(None, RULES)
    try:
        assert backend.run("1 + 1", "eval", None, rules) == 2
        ((process, _lock),) = backend._processes.values()
        policy = process.worker.plan.policy  # what the worker process was started with
        # every line is the caller's argument (<arg>), none a temporary file's
        assert policy.eval_rules and all(line.origin.is_arg for line in policy.eval_rules)
        assert policy.lock is not None and policy.lock.is_arg  # learn=false: nothing widens
    finally:
        backend.close()
