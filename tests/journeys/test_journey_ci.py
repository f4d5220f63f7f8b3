"""The seed's CI scenario, end to end: a pull request from a fork, in a fresh clone, run the
way examples/ci/.github/workflows/sandboxed-tests.yml runs it.

The pull request widens ``ci.py-sandboxes`` (every host, the runner's token) and brings two
hostile tests. The workflow's steps: the rule file is taken from the base branch, the review
gate flags the widening, and the suite runs under the base branch's rules: the honest tests
pass, the hostile ones are refused, nothing reaches the other host, the token never shows.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.e2e.test_ci_recipe import COMMAND, RECIPE, SECRET, Server, job_env, outcomes
from tests.helpers import require, require_tool, run_sb


def git(args: list[str], cwd: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_ci_recipe_from_a_clean_checkout(tmp_path: Path, home: Path) -> None:
    try:
        available = bool(get_provider("bwrap").availability())
    except ConfigError:
        available = False
    require(available, "os-sandbox=bwrap cannot run on this machine")
    require_tool("pasta", "passt")
    require_tool("nft", "nftables")
    require_tool("git")
    granted, other = Server(b"service ok"), Server(b"exfiltration endpoint")
    try:
        # The project's repository: its base branch holds the reviewed rule file.
        origin = tmp_path / "origin"
        shutil.copytree(RECIPE / "project", origin)
        base_rules = (RECIPE / "ci.py-sandboxes").read_text().replace("8765", str(granted.port))
        (origin / "ci.py-sandboxes").write_text(base_rules)
        test = origin / "tests" / "test_calc.py"
        text = test.read_text().replace("8765", str(granted.port))
        test.write_text(text.replace("8766", str(other.port)))
        git(["init", "-q", "-b", "main"], origin)
        git(["add", "-A"], origin)
        git(["commit", "-q", "-m", "base"], origin)
        # The pull request: it widens the rules its own tests run under.
        git(["checkout", "-q", "-b", "pr"], origin)
        wider = f"net=ALLOW|TCP|127.0.0.1|{other.port}|OUT"
        widened = base_rules + wider + "\nenv=GITHUB_TOKEN=${GITHUB_TOKEN}\n"
        (origin / "ci.py-sandboxes").write_text(widened)
        git(["commit", "-q", "-am", "tests need the network"], origin)

        # The runner: a fresh clone of the pull request, the base branch fetched beside it.
        checkout = tmp_path / "checkout"
        git(["clone", "-q", "-b", "pr", str(origin), str(checkout)], tmp_path)
        env = job_env(home)

        # Step: the rule file from the base branch, never from the pull request.
        from_base = tmp_path / "runner-temp-ci.py-sandboxes"
        from_base.write_text(git(["show", "origin/main:ci.py-sandboxes"], checkout))

        # Step: the review gate sees the widening (a non-zero exit fails the job).
        review = run_sb(["--review", "origin/main...HEAD"], cwd=checkout, env=env)
        assert review.returncode == 1, review.stdout + review.stderr
        assert f"HIGH   + {wider}" in review.stdout
        assert "HIGH   + env=GITHUB_TOKEN=${GITHUB_TOKEN}" in review.stdout

        # Step: the tests, under the base branch's rules.
        shutil.copy(from_base, checkout / "ci.py-sandboxes")
        (checkout / "test-reports").mkdir()
        result = run_sb(COMMAND, cwd=checkout, env=env)
        assert result.returncode == 1, result.stdout + result.stderr  # some tests failed
        found = outcomes(checkout / "test-reports" / "junit.xml")
        assert found["test_add"] == "passed"
        assert found["test_granted_service"] == "passed"
        assert found["test_reads_runner_secret"] == "KeyError: 'GITHUB_TOKEN'"
        assert found["test_calls_out"].startswith("pysandboxes.errors.RuleConnectionRefusedError")
        assert other.received == []
        assert SECRET not in result.stdout + result.stderr

        # The control: under the pull request's own file the hostile tests reach their goals.
        git(["checkout", "-q", "--", "ci.py-sandboxes"], checkout)
        widened_run = run_sb(COMMAND, cwd=checkout, env=env)
        assert widened_run.returncode == 0, widened_run.stdout + widened_run.stderr
        assert other.received == [b"stolen"]
    finally:
        granted.sock.close()
        other.sock.close()
