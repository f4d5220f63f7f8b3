"""``os-sandbox=unshare``: the same isolation checks as bwrap, through the real setup step."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy.model import Policy
from pysandboxes.providers import get_provider
from pysandboxes.providers.base import Launch
from pysandboxes.runtime import RunContext
from tests.unit.providers.test_bwrap_provider import check_isolation, run_in


def test_unshare_isolation(tmp_path: Path) -> None:
    check_isolation("unshare", tmp_path)


def test_unshare_exit_status_stdio_and_signal_death(tmp_path: Path) -> None:
    result = run_in(
        "unshare",
        Policy(),
        "import sys; print(input()); sys.exit(7)",
        [],
        cwd=tmp_path,
        tmpdir=tmp_path,
        input="hello\n",
    )
    assert (result.returncode, result.stdout) == (7, "hello\n")
    killed = run_in(
        "unshare",
        Policy(),
        "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
        [],
        cwd=tmp_path,
        tmpdir=tmp_path,
    )
    assert killed.returncode == -11  # the same death as the program's, not 128+11


def test_unshare_cwd_not_exposed_is_empty_and_read_only(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    result = run_in(
        "unshare",
        Policy(),
        "import os, errno\n"
        "print(os.getcwd(), os.listdir('.'))\n"
        "try:\n    open('new', 'w')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])",
        [],
        cwd=tmp_path,
        tmpdir=tmp_path / "t",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == [f"{tmp_path} []", "EROFS"]


def test_unshare_refuses_a_relative_interpreter(tmp_path: Path) -> None:
    launch = Launch(Policy(), RunContext(), ("python3", "-c", "pass"), {}, cwd=str(tmp_path))
    with pytest.raises(ConfigError, match="absolute"):
        get_provider("unshare").prepare(launch)
