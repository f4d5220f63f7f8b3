"""Any text gives a Policy or a ConfigError whose problems each name FILE(LINE); never another
exception (issue 2, Done when)."""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pysandboxes.errors import ConfigError
from pysandboxes.policy import load_policy, parse_text
from pysandboxes.policy.model import Policy

_WORKDIR = Path(tempfile.mkdtemp(prefix="pysb-prop-"))
atexit.register(shutil.rmtree, _WORKDIR, True)
(_WORKDIR / "inc").write_text("python-import=json\nnet=DENY|*|10.0.0.0/8|*|OUT\n")
(_WORKDIR / "data").mkdir(exist_ok=True)
_MAIN = str(_WORKDIR / ".py-sandboxes")
_WHERE = re.compile(r"^(.+\(\d+\)|<arg>)$")

_KEYS = [
    "py-sandbox",
    "os-sandbox",
    "learn",
    "env",
    "unenv",
    "expose-ro",
    "expose-rw",
    "ignore",
    "python-import",
    "python-api",
    "net",
    "eval-syntax",
    "eval-call",
    "eval-timeout",
    "eval-max-nodes",
    "eval-call:p",
    "bwrap.hostname",
    "qemu.memory",
    "denials",
    "x",
]
_PIECES = [
    "ALLOW",
    "DENY",
    "|",
    "*",
    ":",
    ",",
    "=",
    "${",
    "}",
    ":-",
    "$",
    '"',
    "'",
    "#",
    " ",
    "TCP",
    "10.0.0.0/8",
    "::ffff:1.2.3.4",
    "443",
    "80-90",
    "OUT",
    "IN",
    "true",
    "false",
    "json",
    "os.system",
    "process-exec",
    "PAT_*",
    "./data",
    "~",
    "/",
    "2s",
    "arith",
    "DENY:",
    "\\",
    "\x00",
    "\u00e9",
    "\ud800",
    "\udcff",
    "..",
    "HOME",
    "X",
    "~\x00",
    "${X:-~}",
]
_value = st.lists(st.sampled_from(_PIECES) | st.text(max_size=4), max_size=8).map("".join)
_rule = st.builds(lambda k, v: f"{k}={v}", st.sampled_from(_KEYS), _value)
_include = _value.map(lambda v: f'include "{v}"') | st.just('include "inc"')
_line = _rule | _include | st.text(max_size=30) | st.sampled_from(["", "# c", "# --- learned"])
_text = st.lists(_line, max_size=12).map("\n".join)
_cli = st.lists(st.tuples(st.sampled_from(_KEYS), _value), max_size=3)


def _check(call: object) -> None:
    try:
        result = call()  # type: ignore[operator]
    except ConfigError as exc:
        assert exc.problems
        for problem in exc.problems:
            assert _WHERE.match(problem.where), problem
            assert "\n" not in str(problem)
        return
    assert isinstance(result, Policy)
    assert Policy.from_json(result.to_json()) == result


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=400))
def test_any_text(text: str) -> None:
    _check(lambda: parse_text(text, _MAIN, environ={"HOME": str(_WORKDIR)}, cwd=str(_WORKDIR)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_text, cli=_cli, environ=st.dictionaries(st.sampled_from(["X", "HOME"]), _value))
def test_rule_like_text(text: str, cli: list[tuple[str, str]], environ: dict[str, str]) -> None:
    _check(lambda: parse_text(text, _MAIN, cli_rules=cli, environ=environ, cwd=str(_WORKDIR)))


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=200))
def test_any_bytes_in_a_file(data: bytes) -> None:
    path = _WORKDIR / "bytes.rules"
    path.write_bytes(data)
    _check(lambda: load_policy(str(path), environ={}, cwd=str(_WORKDIR)))
