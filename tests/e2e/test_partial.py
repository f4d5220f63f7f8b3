"""Partial mode end to end (SPEC §6, issue 13): real workers under every provider.

``programs/partial/scenario.py`` is run once per provider (``OS_SANDBOX``); it drives each
point through the public API and reports what happened as one JSON object, which the tests
below read. The security claims have their control in the same run: the secret file is read by
the unsandboxed original, the hostile pickle runs its command when decoded with plain pickle.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, base_env, require

PROGRAMS = Path(__file__).parent / "programs" / "partial"
PROVIDERS = ["subprocess", "landlock", "bwrap", "unshare"]
_cache: dict[str, tuple[dict[str, Any], str, str, Path]] = {}


def scenario(provider: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    state = get_provider(provider).availability()
    require(state.ok, f"os-sandbox={provider}: {state.reason} ({state.install_hint})")
    if provider not in _cache:
        root = tmp_path_factory.mktemp(f"partial-{provider}")
        work = root / "work"
        work.mkdir()
        (root / "secret.txt").write_text("TOPSECRET\n")
        env = base_env(root, {"OS_SANDBOX": provider, "PARTIAL_WORK": str(work)})
        proc = subprocess.run(
            [PYTHON, str(PROGRAMS / "scenario.py"), str(work)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        _cache[provider] = (json.loads(proc.stdout), proc.stdout, proc.stderr, work)
    return _cache[provider][0]


@pytest.fixture(params=PROVIDERS)
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return scenario(request.param, tmp_path_factory)


@pytest.fixture(params=PROVIDERS)
def streams(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    scenario(request.param, tmp_path_factory)
    return _cache[request.param][1:3]


def test_outside_a_context_is_a_clear_error(report: dict[str, Any]) -> None:
    assert report["outside"] == "PartialModeError"


def test_file_refusal_comes_back_with_its_denial(report: dict[str, Any]) -> None:
    assert report["control_secret"] == "TOPSECRET\n"  # the original, unsandboxed, reads it
    secret = report["secret"]
    assert secret["error"] == "RulePermissionError"
    assert {"PermissionError", "SandBoxError"} <= set(secret["mro"])
    assert [d["kind"] for d in secret["denials"]] == ["file"]
    assert secret["denials"][0]["target"].endswith("secret.txt")
    assert "in read_file" in secret["remote"]


def test_import_refusal_comes_back_with_its_denial(report: dict[str, Any]) -> None:
    refused = report["import"]
    assert refused["error"] == "RuleModuleNotFoundError"
    assert [(d["kind"], d["target"]) for d in refused["denials"]] == [("import", "socket")]


def test_shipped_code_is_judged_as_the_programs(report: dict[str, Any]) -> None:
    # The worker (python-sb's own code) builds the function; the guard still judges the
    # function's eval as the program's dynamic code, which no rule allows.
    assert report["control_eval"] == 42
    refused = report["eval"]
    assert refused["error"] == "RuleApiPermissionError"
    assert [d["kind"] for d in refused["denials"]] == ["api"]


def test_exception_keeps_its_class_and_the_sandboxed_traceback(report: dict[str, Any]) -> None:
    failed = report["exception"]
    assert failed["error"] == "ValueError"
    assert failed["message"] == "('bad value', 42)"
    assert 'raise ValueError("bad value", 42)' in failed["remote"]


def test_crash_fails_the_call_once_and_the_next_call_gets_a_new_worker(
    report: dict[str, Any],
) -> None:
    crash = report["crash"]
    assert crash["error"] == "WorkerDiedError"
    assert crash["status"] == 7
    assert report["crash_runs"] == 1  # the body ran exactly once: never sent again
    assert "ok" in report["after_crash"]
    assert report["restarts_after_crash"] == 1


def test_timeouts_stop_a_busy_loop_a_sleep_and_a_long_c_call(report: dict[str, Any]) -> None:
    for key in ("busy", "sleep_timeout", "sum_timeout"):
        assert report[key]["error"] == "CallTimeoutError", key
        assert "TimeoutError" in report[key]["mro"]
    # Generous bounds: the point is that nothing ran to its end (30 s, 10**12 additions).
    assert report["busy_seconds"] < 10
    assert report["sleep_seconds"] < 10
    assert report["sum_seconds"] < 10
    assert "ok" in report["after_timeouts"]


def test_cancellation_kills_the_worker_and_the_function_never_finishes(
    report: dict[str, Any],
) -> None:
    assert report["cancel"] == {"ok": {"cancelled": True, "killed": True}}
    assert report["cancel_marker"] is False


def test_calls_run_concurrently(report: dict[str, Any]) -> None:
    # 8 calls of 0.3 s each: about 0.3 s together, 2.4 s one after the other.
    assert report["sync_concurrency_seconds"] < 2
    assert report["async_concurrency"] == {"ok": ["done"] * 8}
    assert report["async_concurrency_seconds"] < 2
    # The worker's event loop has an executor, whose threads were started before the guard.
    assert report["executor"] == {"ok": 6}


def test_a_call_that_waits_for_a_concurrent_call_does_not_hang(report: dict[str, Any]) -> None:
    # The first call runs until the second (sent while it runs) has run in the same worker.
    assert report["releases_other"] == {"ok": True}
    assert report["waits_for_other"] == {"ok": "released"}


def test_two_calls_read_at_once_run_at_once(report: dict[str, Any]) -> None:
    # Both calls were sent while every worker thread was busy, so one read takes both frames;
    # the first waits for the second, which another thread must run.
    assert report["batched_sent_while_held"] is True
    assert report["holders"] == [{"ok": "held"}] * 8
    assert report["batched_releases"] == {"ok": True}
    assert report["batched_waits"] == {"ok": "released"}


def test_each_profile_has_its_own_worker_and_rules(report: dict[str, Any]) -> None:
    assert report["profile_json"]["ok"][0] == "[1, 2]"
    assert report["profile_default"]["error"] == "RuleModuleNotFoundError"
    assert report["profile_default"]["denials"][0]["target"] == "json"
    assert report["profile_workers"] == 2  # two worker processes, one per rule file


def test_methods_static_class_nested_and_main_functions(report: dict[str, Any]) -> None:
    assert report["method"] == {"ok": 12}
    assert report["static"] == {"ok": 5}
    assert report["classmethod"] == {"ok": "Multiplier:x"}
    assert report["nested"] == {"ok": 16}


def test_hostile_result_is_refused_by_the_restricted_unpickler(report: dict[str, Any]) -> None:
    assert report["hostile_control"] is True  # plain pickle runs the command
    assert report["hostile"]["error"] == "UnsafeResultError"
    assert report["hostile_marker"] is False


def test_a_forged_oversized_frame_kills_the_worker(report: dict[str, Any]) -> None:
    # The function writes a header claiming 1 GB on the worker's own socket: the caller reads
    # no further, kills the worker and fails the call; the next call gets a new worker.
    forged = report["forged"]
    assert forged["error"] == "WorkerDiedError"
    assert "larger than the result limit" in forged["message"]
    assert "ok" in report["after_forged"]


def test_result_size_limit(report: dict[str, Any]) -> None:
    assert report["big_small"] == {"ok": 100}
    assert report["big"]["error"] == "ResultTooLargeError"


def test_contexts_nest_only_with_the_same_rules(report: dict[str, Any]) -> None:
    assert report["nested_same"] == {"ok": 10}
    assert report["nested_other"] == "PartialModeError"


def test_is_in_sandbox(report: dict[str, Any]) -> None:
    assert report["is_in_sandbox"] == {"ok": False}
    assert report["is_in_sandbox_worker"] == {"ok": True}


def test_function_output_never_reaches_the_callers_stdout(streams: tuple[str, str]) -> None:
    stdout, stderr = streams
    json.loads(stdout)  # stdout holds the report alone
    assert "TOOL-OUTPUT" not in stdout
    assert "TOOL-OUTPUT on stdout" in stderr
    assert "TOOL-ERROR on stderr" in stderr
