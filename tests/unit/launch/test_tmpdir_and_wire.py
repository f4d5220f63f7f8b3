"""The private temporary directory (creation, sweeping of stale ones) and the launch wire format."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pysandboxes.launch import child, tmpdir, wire
from pysandboxes.launch.child import decode_guard_data, decode_run, plain_data, remove_tree
from pysandboxes.launch.wire import encode_run, guard_data
from pysandboxes.policy import parse_text
from pysandboxes.runtime import RunContext


def test_create_is_private_and_named_by_pid(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        path = tmpdir.create(str(tmp_path))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    assert os.path.basename(path).startswith(f"pysb-{os.getpid()}-")


def _ended_pid() -> str:
    """The pid of a process that has ended (a short python run, reaped)."""

    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return ended.stdout.strip()


def test_a_directory_of_another_kind_is_swept_once_its_process_is_gone(tmp_path: Path) -> None:
    """Guarded evaluation's worker folder (``owned_prefix("eval")``) of a host that was killed
    before its clean-up ran: removed by a later run's sweep; a live host's is kept."""

    assert tmpdir.owned_prefix("eval") == f"pysb-{os.getpid()}-eval-"
    mine = tmp_path / (tmpdir.owned_prefix("eval") + "live")
    mine.mkdir()
    gone = tmp_path / f"pysb-{_ended_pid()}-eval-abcd"
    gone.mkdir()

    removed = tmpdir.sweep(str(tmp_path))

    assert removed == [str(gone)]
    assert mine.is_dir()


def test_sweep_removes_only_dead_runs(tmp_path: Path) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        alive = tmp_path / f"pysb-{sleeper.pid}-aaaa"
        alive.mkdir()
        dead = tmp_path / f"pysb-{_ended_pid()}-bbbb"
        (dead / "deep" / "er").mkdir(parents=True)
        (dead / "deep" / "er" / "f").write_text("x")
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "keep").write_text("x")
        (dead / "link").symlink_to(outside)  # removing the tree must not follow it
        not_ours = tmp_path / "pysb-notapid-cccc"
        not_ours.mkdir()
        a_file = tmp_path / "pysb-1-dddd"
        a_file.write_text("a file, not a run directory")
        removed = tmpdir.sweep(str(tmp_path))
    finally:
        sleeper.kill()
        sleeper.wait()
    assert removed == [str(dead)]
    assert not dead.exists()
    assert alive.is_dir() and not_ours.is_dir() and a_file.is_file()
    assert (outside / "keep").exists()


def test_remove_tree_ignores_missing(tmp_path: Path) -> None:
    remove_tree(str(tmp_path / "nothing-here"))  # no exception


def test_remove_tree_never_leaves_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "precious").write_text("x")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "f").write_text("x")
    (tree / "a" / "to-dir").symlink_to(outside)
    (tree / "a" / "to-file").symlink_to(outside / "sub" / "precious")
    (tree / "a" / "dangling").symlink_to(tmp_path / "nowhere")
    link_top = tmp_path / "link-top"
    link_top.symlink_to(outside)
    remove_tree(str(tree))
    remove_tree(str(link_top))  # a symlink given as the tree: the link goes, not its target
    assert not tree.exists() and not link_top.is_symlink()
    assert (outside / "sub" / "precious").read_text() == "x"


@pytest.mark.parametrize("args", [[], [""], ["a", "", "b"], ["--args--", "x\x1fy", "é", "\udcff"]])
def test_wire_round_trip(args: list[str]) -> None:
    fields = {"kind": "stdin", "program": "", "tmpdir": "/t", "n_words": "0"}
    data = encode_run(fields, args, b"\x00\n{guard data}")
    got_fields, got_args, rest = decode_run(data)
    assert got_fields == fields and got_args == args
    assert rest == b"\x00\n{guard data}"


def test_wire_refuses_nul() -> None:
    with pytest.raises(ValueError, match="NUL"):
        encode_run({"kind": "code"}, ["a\0b"], b"")


def test_both_halves_name_the_same_format() -> None:
    assert wire.FORMAT == child.FORMAT and wire.ARGS_MARK == child.ARGS_MARK
    assert os.path.samefile(wire.CHILD_FILE, child.__file__)


RICH_RULES = """\
py-sandbox=true
os-sandbox=subprocess
expose-ro=/usr/share
expose-rw={rw}
ignore=*.pyc
env=LANG=${LANG}
env=PAT_*=${PAT_*}
unenv=SECRET
python-import=json
python-api=ALLOW:threads
net=ALLOW|TCP|example.org|443|OUT
net=DENY|*|10.0.0.0/8|*|*
eval-max-nodes=100
"""


def test_guard_data_round_trip(tmp_path: Path) -> None:
    policy = parse_text(RICH_RULES.replace("{rw}", str(tmp_path)), "/r/.py-sandboxes")
    assert policy.net and policy.env and policy.ignore and policy.eval_rules
    context = RunContext(
        mode="audit",
        tmpdir="/tmp/pysb-1-x",
        program="/p/a.py",
        prefixes=("/usr", "/venv"),
        record_fd=7,
        denials_file="/d.jsonl",
    )
    context_data, policy_data = decode_guard_data(guard_data(context, policy))
    assert type(policy).from_data(policy_data) == policy
    assert RunContext.from_dict(context_data) == context


@pytest.mark.parametrize(
    "value",
    [
        (1, 2),
        {1: "x"},
        [b"bytes"],
        [1.5],
        {"code": compile("pass", "x", "exec")},
        [frozenset()],
        [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
    ],
)
def test_guard_data_refuses_anything_but_plain_data(value: object) -> None:
    import marshal

    assert not plain_data(value)
    with pytest.raises(RuntimeError, match="not plain data"):
        decode_guard_data(marshal.dumps([{}, {"x": value}], 4))


def test_guard_data_refuses_garbage() -> None:
    import marshal

    with pytest.raises(RuntimeError, match="unreadable launch data"):
        decode_guard_data(b"\xff\x00garbage")
    with pytest.raises(RuntimeError, match="not plain data"):
        decode_guard_data(marshal.dumps(None, 4))
    with pytest.raises(RuntimeError, match="not plain data"):
        decode_guard_data(marshal.dumps([{}, {}, {}], 4))
