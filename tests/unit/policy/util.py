"""Helpers for the policy tests: write a rule file in a tmp dir and load it for real."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy import load_policy
from pysandboxes.policy.model import Policy


def load(
    tmp_path: Path,
    text: str,
    *,
    cli: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
    name: str = ".py-sandboxes",
    learned_ok: bool = False,
) -> Policy:
    """Write ``text`` to ``tmp_path/name`` and load it with cwd=tmp_path and HOME=tmp_path/home."""

    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    environ = {"HOME": str(tmp_path / "home"), **(env or {})}
    return load_policy(
        str(path), cli_rules=cli, environ=environ, cwd=str(tmp_path), learned_ok=learned_ok
    )


def problems(tmp_path: Path, text: str, **kwargs: object) -> list[str]:
    """The problem lines of a rule text that must be refused."""

    with pytest.raises(ConfigError) as info:
        load(tmp_path, text, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def one_problem(tmp_path: Path, text: str, **kwargs: object) -> str:
    found = problems(tmp_path, text, **kwargs)
    assert len(found) == 1, found
    return found[0]
