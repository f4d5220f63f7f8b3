"""The private temporary directory (creation, sweeping of stale ones) and the launch wire format."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pysandboxes.launch import tmpdir
from pysandboxes.launch.child import decode_run, encode_run, remove_tree


def test_create_is_private_and_named_by_pid(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        path = tmpdir.create(str(tmp_path))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    assert os.path.basename(path).startswith(f"pysb-{os.getpid()}-")


def test_sweep_removes_only_dead_runs(tmp_path: Path) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        alive = tmp_path / f"pysb-{sleeper.pid}-aaaa"
        alive.mkdir()
        dead_proc = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        )
        dead = tmp_path / f"pysb-{dead_proc.stdout.strip()}-bbbb"
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
    data = encode_run(fields, args, '{"x":1}\n{"policy":true}')
    got_fields, got_args, rest = decode_run(data)
    assert got_fields == fields and got_args == args
    assert rest == b'{"x":1}\n{"policy":true}'


def test_wire_refuses_nul() -> None:
    with pytest.raises(ValueError, match="NUL"):
        encode_run({"kind": "code"}, ["a\0b"], "")
