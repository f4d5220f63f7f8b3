"""The hook's JSON reader and writer agree with the standard ``json`` module."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysandboxes.integrations import jsonlite

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_reads_what_json_writes(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        assert jsonlite.loads(text) == value


writable = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(writable)
def test_writes_what_json_writes(value: object) -> None:
    assert jsonlite.dumps(value) == json.dumps(value)


@settings(max_examples=1500, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list('{}[]":,0123456789-+.eE \\u/tnrfalsbx\x01é')), max_size=24
    )
)
def test_accepts_and_refuses_what_json_does(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            jsonlite.loads(text)
        return
    assert jsonlite.loads(text) == expected


@pytest.mark.parametrize(
    "text", ["NaN", "Infinity", "-Infinity", '{"a": NaN}', "[1,]", "01", "1.", ".5", '"\\x"']
)
def test_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        jsonlite.loads(text)


def test_surrogate_pairs_and_nesting() -> None:
    assert jsonlite.loads('"\\ud83d\\ude00 \\u0070ython"') == "\U0001f600 python"
    assert jsonlite.loads('"\\ud800"') == "\ud800"
    with pytest.raises(ValueError):
        jsonlite.loads("[" * 1000 + "]" * 1000)


def test_the_hook_does_not_import_json_or_re() -> None:
    code = (
        "import sys, io\n"
        'sys.stdin = io.TextIOWrapper(io.BytesIO(b\'{"tool_name": "Bash", '
        '"tool_input": {"command": "ls"}}\'))\n'
        "from pysandboxes.launch.cli import main\n"
        "main(['--hook=claude-code'])\n"
        "print(sorted(m for m in ('json', 're', 'typing', 'dataclasses') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
