"""The conformance matrix (issue 11, deliverable 3): one meaning per rule under every enforcer.

Every case of ``cases.py`` runs through the real ``python-sb`` under each configuration of
``CONFIGS`` (``subprocess`` with the Python layer; ``landlock``, ``bwrap``, ``unshare``, ``qemu``
with it off and on; under ``qemu`` one case per category unless ``PYSANDBOXES_QEMU_ALL=1``), one
run per cell, plus a control under plain python3 that must reach the objective. A cell fails on
a silent widening or a breakage that is not an announced, documented limit; the failure message
says which. Cells known to fail today are listed in ``known.py`` (strict xfail).
See docs/conformance.md.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance import harness, remote
from tests.conformance.cases import (
    ALLOWED,
    CASES,
    CONFIGS,
    EVAL_CONFIGS,
    LIMITS,
    REFUSED,
    WORKER_CONFIGS,
    Case,
    runs_in_a_worker,
    runs_in_eval,
)
from tests.conformance.known import KNOWN_FAILURES
from tests.helpers import loopback_host_name, require, require_tool

BY_ID = {case.id: case for case in CASES}


#: Each qemu cell boots a VM (seconds under TCG on 2 cores): by default one case per category
#: runs under the two qemu configurations; ``PYSANDBOXES_QEMU_ALL=1`` runs the whole table.
QEMU_ALL = os.environ.get("PYSANDBOXES_QEMU_ALL") == "1"
QEMU_CASES = frozenset(
    {
        "files/ro-write",  # EROFS from the host's bind, through 9p
        "defaults/usr-share",  # an announced limit of the shared tree
        "env/unenv-beats-pattern",
        "net/out-ip",  # the host's loopback, relayed from the guest's 127.0.0.1
        "net/edge-direct-granted",  # a remote name, the guest's connection redirected
        "net/edge-lying-host",  # to the edge proxy, which reaches only the host named
        "children/cat-reads-ungranted",
        "imports/not-granted",  # qemu-py only
        "sqlite/write-in-rw",  # writes reach the host through 9p
        "learned/copy-file",  # a file learned without qemu, replayed in the VM
    }
)


def _all_cells() -> list[tuple[str, str]]:
    return [
        (case.id, config)
        for case in CASES
        for config, (_, py) in CONFIGS.items()
        if py or not case.python_only
    ]


#: ``PYSANDBOXES_MATRIX_LAYER=python``: only the configurations with the Python layer on (the
#: worker and eval columns have it on too). scripts/test.sh's run of the Python layer without
#: its compiled accelerator: the kernel-only cells do not run it.
PYTHON_LAYER_ONLY = os.environ.get("PYSANDBOXES_MATRIX_LAYER") == "python"


def _cells() -> list[tuple[str, str]]:
    return [
        (case_id, config)
        for case_id, config in _all_cells()
        if QEMU_ALL or CONFIGS[config][0] != "qemu" or case_id in QEMU_CASES
        if CONFIGS[config][1] or not PYTHON_LAYER_ONLY
    ]


def _param(case_id: str, config: str) -> object:
    cell = f"{case_id}@{config}"
    reason = KNOWN_FAILURES.get(cell)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case_id, config, id=cell, marks=marks)


CELLS = [_param(case_id, config) for case_id, config in _cells()]
#: The entry-point columns (issue 24 item 8): every case that applies to a worker, as a
#: ``@sandbox`` function, under each provider that runs one.
WORKER_CELLS = [
    _param(case.id, config) for case in CASES if runs_in_a_worker(case) for config in WORKER_CONFIGS
]
#: Guarded evaluation's column: the cases its language can express, each evaluated through
#: ``guarded_eval(rules=...)``'s spawned worker and, as the reference, under ``python-sb``.
EVAL_CELLS = [
    _param(case.id, config) for case in CASES if runs_in_eval(case) for config in EVAL_CONFIGS
]
CONTROLS = [_param(case.id, "python3") for case in CASES]


@functools.cache
def _provider_state(name: str) -> tuple[bool, str]:
    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    return state.ok, f"os-sandbox={name}: {state.reason} ({state.install_hint})"


def _requirements(case: Case, config: str | None) -> None:
    for path in case.needs:
        require(Path(path).exists(), f"{path} does not exist on this machine")
    if any("{NAME}" in text for text in (*case.rules, *case.op)):
        require(loopback_host_name(), "/etc/hosts names 127.0.0.1 only as localhost")
    if config is None:
        return
    provider = CONFIGS[config][0]
    ok, reason = _provider_state(provider)
    require(ok, reason)
    if provider in ("bwrap", "unshare", "qemu") and any(r.startswith("net=") for r in case.rules):
        require_tool("pasta", "passt")
        require_tool("nft", "nftables")


def _control_env(case: Case, tree: Path) -> dict[str, str]:
    env = harness.cell_env(tree)
    for item in case.control_env.split(";"):
        if item.strip():
            name, value = item.strip().split("=", 1)
            env[name] = value
    return env


@pytest.fixture(scope="session")
def remote_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[remote.World]:
    """The remote host of the ``remote`` cases, made once per test process (skips, or fails
    under PYSANDBOXES_REQUIRE_ALL=1, without root, ip(8) or openssl)."""

    with remote.other_machine(tmp_path_factory.mktemp("remote")) as world:
        yield world


def _world(case: Case, request: pytest.FixtureRequest, tree: Path) -> remote.World | None:
    """The remote host when the case has one (its CA then beside the probe in ``tree``)."""

    if case.host != "remote":
        return None
    world: remote.World = request.getfixturevalue("remote_world")
    harness.enter_world(tree, world)
    return world


@pytest.mark.parametrize(("case_id", "config"), CONTROLS)
def test_control_reaches_the_objective(
    case_id: str, config: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Under plain python3 the program reaches its objective: a refusal in a cell then means
    the sandbox refused it, not that the objective was out of reach anyway."""

    case = BY_ID[case_id]
    _requirements(case, None)
    tree = tmp_path / "t"
    harness.build_tree(tree)
    world = _world(case, request, tree)
    with harness.host_side(case) as ports:
        values = harness.placeholder_values(tree, ports, world)
        harness.write_rules(case, values)  # the same files exist (a case may write the rules)
        op = [harness.substitute(w, values) for w in case.op]
        try:
            run = harness.run_program(
                harness.control_argv(tree, op),
                case,
                values,
                harness.substitute(case.cwd, values),
                _control_env(case, tree),
                world,
            )
        finally:
            harness.remove_host_tmp(tree)
    assert run.outcome == ALLOWED, f"control of {case_id} did not reach its objective:\n" + (
        f"{run.outcome} {run.detail}\n{run.output}"
    )


class _Learned:
    """A learned case's tree, learned once per test process and replayed by each cell."""

    def __init__(self, case: Case, root: Path) -> None:
        self.tree = root / case.id.replace("/", "-")
        if self.tree.exists():
            shutil.rmtree(self.tree)
        harness.build_tree(self.tree)
        with harness.host_side(case) as ports:
            self.ports = ports
            self.values = harness.placeholder_values(self.tree, ports)
            self.rules, self.run = harness.learn(case, self.tree, self.values)


@pytest.fixture(scope="session")
def learned_cache(tmp_path_factory: pytest.TempPathFactory) -> dict[str, _Learned]:
    return {}


@pytest.fixture(scope="session")
def learned_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("learned")


@pytest.mark.parametrize(("case_id", "config"), CELLS)
def test_cell(
    case_id: str,
    config: str,
    tmp_path: Path,
    learned_cache: dict[str, _Learned],
    learned_root: Path,
    request: pytest.FixtureRequest,
) -> None:
    case = BY_ID[case_id]
    _requirements(case, config)
    if case.learned:
        if case_id not in learned_cache:
            learned_cache[case_id] = _Learned(case, learned_root)
        state = learned_cache[case_id]
        assert state.run.outcome == ALLOWED, (
            f"learning run of {case_id} failed: {state.run.detail}\n{state.run.output}"
        )
        assert state.rules.exists(), f"learning wrote no rule file:\n{state.run.output}"
        tree, rules, fixed_ports = state.tree, state.rules, state.ports
    else:
        tree = tmp_path / "t"
        harness.build_tree(tree)
        rules, fixed_ports = None, None
    world = _world(case, request, tree)
    with harness.host_side(case, fixed_ports) as ports:
        values = harness.placeholder_values(tree, ports, world)
        if rules is None:
            rules = harness.write_rules(case, values)
        op = [harness.substitute(w, values) for w in case.op]
        argv = harness.sb_argv(config, rules, op, tree)
        env = harness.cell_env(tree)
        cwd = harness.substitute(case.cwd, values)
        try:
            run = harness.run_program(argv, case, values, cwd, env, world)
        finally:
            harness.remove_host_tmp(tree)
    warnings = None
    expect, limit = harness.expected_outcome(case, config)
    if (
        limit is not None
        and run.outcome == LIMITS[limit].outcome != expect
        and harness.announced(limit, run.announcements) is None
    ):  # not said on stderr: look in --explain --json's warnings
        warnings = harness.explain_warnings(argv, cwd, env, world)
    verdict = harness.judge(case, config, run, warnings)
    assert verdict.ok, (
        verdict.message + "\n\n" + harness.describe(case, config, run, rules.read_text())
    )


@pytest.mark.parametrize(("case_id", "config"), WORKER_CELLS)
def test_worker_cell(
    case_id: str,
    config: str,
    tmp_path: Path,
    learned_cache: dict[str, _Learned],
    learned_root: Path,
    request: pytest.FixtureRequest,
) -> None:
    """The case's operation as a ``@sandbox`` function in a worker: held to the command line's
    cell of the same provider (``WORKER_CONFIGS``: the same expected outcome and limits)."""

    case = BY_ID[case_id]
    reference = WORKER_CONFIGS[config]
    _requirements(case, reference)
    if case.learned:
        if case_id not in learned_cache:
            learned_cache[case_id] = _Learned(case, learned_root)
        state = learned_cache[case_id]
        assert state.run.outcome == ALLOWED, state.run.output
        tree, rules, fixed_ports = state.tree, state.rules, state.ports
    else:
        tree = tmp_path / "t"
        harness.build_tree(tree)
        rules, fixed_ports = None, None
    world = _world(case, request, tree)
    with harness.host_side(case, fixed_ports) as ports:
        values = harness.placeholder_values(tree, ports, world)
        if rules is None:
            rules = harness.write_rules(case, values)
        op = [harness.substitute(w, values) for w in case.op]
        argv = harness.worker_argv(config, rules, op, tree)
        env = harness.cell_env(tree)
        cwd = harness.substitute(case.cwd, values)
        try:
            run = harness.run_program(argv, case, values, cwd, env, world)
        finally:
            harness.remove_host_tmp(tree)
    warnings = None
    expect, limit = harness.expected_outcome(case, reference)
    if (
        limit is not None
        and run.outcome == LIMITS[limit].outcome != expect
        and harness.announced(limit, run.announcements) is None
    ):  # what the command line's --explain --json says for the same rules and provider
        warnings = harness.explain_warnings(
            harness.sb_argv(reference, rules, op, tree), cwd, env, world
        )
    verdict = harness.judge(case, reference, run, warnings)
    assert verdict.ok, (
        f"the worker differs from the command line's {reference} cell: {verdict.message}\n\n"
        + harness.describe(case, config, run, rules.read_text())
    )


@pytest.mark.parametrize(("case_id", "config"), EVAL_CELLS)
def test_eval_cell(case_id: str, config: str, tmp_path: Path) -> None:
    """The case's operation as source evaluated by ``guarded_eval(rules=...)`` in its spawned
    worker (the program kind ``eval-worker``, ``probe.py --eval``), against the same source
    evaluated under ``python-sb`` by the worker the guard forks from the program, the rule file
    holding the same lines (``--eval-here``; plus ``python-import=pysandboxes``, which a program
    needs to call guarded_eval at all): the two entry points must give the same outcome."""

    from tests.conformance import probe

    case = BY_ID[case_id]
    reference = EVAL_CONFIGS[config]
    _requirements(case, reference)
    tree = tmp_path / "t"
    harness.build_tree(tree)
    with harness.host_side(case) as ports:
        values = harness.placeholder_values(tree, ports)
        rules = harness.write_rules(case, values)
        op = [harness.substitute(w, values) for w in case.op]
        env = harness.cell_env(tree)
        cwd = harness.substitute(case.cwd, values)
        here_rules = rules.with_name("rules.eval.py-sandboxes")
        here_rules.write_text(
            rules.read_text()
            + "python-import=pysandboxes\n"
            + "".join(line + "\n" for line in probe.eval_lines(op[0], op[1:]))
        )
        here_argv = harness.sb_argv(reference, here_rules, ["--eval-here", *op], tree)
        try:
            spawned = harness.run_program(
                harness.worker_argv(config, rules, op, tree), case, values, cwd, env
            )
            here = harness.run_program(here_argv, case, values, cwd, env)
        finally:
            harness.remove_host_tmp(tree)
    assert here.outcome != harness.NO_OUTCOME, harness.describe(case, "python-sb", here, "")
    assert spawned.outcome == here.outcome, (
        f"guarded_eval's spawned worker gave {spawned.outcome} ({spawned.detail}), under "
        f"python-sb the same source and rules gave {here.outcome} ({here.detail})\n\n"
        + harness.describe(case, config, spawned, rules.read_text())
    )


def test_known_failures_name_existing_cells() -> None:
    """Every entry of known.py names a cell of the matrix (a renamed case leaves none behind)."""

    cells = {f"{case_id}@{config}" for case_id, config in _all_cells()}
    cells |= {f"{case.id}@python3" for case in CASES}
    cells |= {f"{c.id}@{config}" for c in CASES if runs_in_a_worker(c) for config in WORKER_CONFIGS}
    cells |= {f"{c.id}@{config}" for c in CASES if runs_in_eval(c) for config in EVAL_CONFIGS}
    assert sorted(set(KNOWN_FAILURES) - cells) == []


def test_table_is_consistent() -> None:
    """At least 120 cases, unique ids, known limit names, expectations from the two classes."""

    assert len(CASES) >= 120
    assert len(BY_ID) == len(CASES)
    for case in CASES:
        assert case.expect in (ALLOWED, REFUSED), case.id
        assert set(case.limits) <= set(LIMITS), case.id
        assert case.host in (
            "",
            "tcp-servers",
            "tcp-servers-46",
            "tcp-servers-lo2",
            "udp-servers",
            "tcp-client",
            "udp-client",
            "create-after-start",
            "remote",
        ), case.id
        assert hasattr(harness, "PROBE")
    for limit in LIMITS.values():
        assert set(limit.configs) <= set(CONFIGS)
    assert set(BY_ID) >= QEMU_CASES
    categories = {case_id.split("/")[0] for case_id in BY_ID}
    assert {case_id.split("/")[0] for case_id in QEMU_CASES} == categories
