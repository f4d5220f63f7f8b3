"""The saved VM state's key and the choice between restoring, saving and a cold boot
(``providers/_qemu_state``), on real files (no VM started: tests/e2e/test_qemu_saved_state.py
restores real states)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

if sys.platform != "linux":
    pytest.skip("os-sandbox=qemu is Linux only", allow_module_level=True)

from pysandboxes.providers import _qemu_state as state
from pysandboxes.providers import qemu

ARGV = ["/usr/bin/qemu-system-x86_64", "-m", "512M", "-fsdev", "local,path=/tmp/run-1/root"]


def test_the_key_ignores_the_runs_directory_and_follows_everything_else(tmp_path: Path) -> None:
    kernel = tmp_path / "vmlinux"
    kernel.write_bytes(b"kernel")
    files = [str(kernel)]
    key = state.state_key(ARGV, "/tmp/run-1", files)
    other_run = [a.replace("/tmp/run-1", "/tmp/run-2") for a in ARGV]
    assert state.state_key(other_run, "/tmp/run-2", files) == key
    assert state.state_key([*ARGV[:2], "1G", *ARGV[3:]], "/tmp/run-1", files) != key
    kernel.write_bytes(b"another kernel")  # an upgrade: another size and modification time
    assert state.state_key(ARGV, "/tmp/run-1", files) != key


def test_only_the_default_offline_tcg_configuration_uses_a_state() -> None:
    base = {
        "network": False,
        "accel": "tcg",
        "memory": qemu.DEFAULT_MEMORY,
        "cpus": qemu.DEFAULT_CPUS,
        "setting": True,
    }
    assert state.eligible(**base)  # type: ignore[arg-type]
    for change in (
        {"network": True},
        {"accel": "kvm"},
        {"memory": "1G"},
        {"cpus": "2"},
        {"setting": False},
    ):
        assert not state.eligible(**{**base, **change})  # type: ignore[arg-type]


class Said:
    def __init__(self) -> None:
        self.progress: list[str] = []
        self.warnings: list[str] = []

    def choose(self, key: str, folder: Path, now: float | None = None) -> state.Choice:
        return state.choose(
            key, str(folder), progress=self.progress.append, warn=self.warnings.append, now=now
        )


def write_state(path: Path, key: str, mode: int = 0o600) -> None:
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_bytes(state.header(key) + b"QEVM stream")
    path.chmod(mode)


def test_a_missing_state_is_saved_by_this_run_into_an_owner_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "states"
    said = Said()
    choice = said.choose("k1", folder)
    assert choice.fd == -1 and choice.save == str(folder / "k1.vmstate")
    assert choice.header == state.header("k1")
    assert said.progress and "saving the booted VM's state" in said.progress[0]
    assert not said.warnings
    assert (folder.stat().st_mode & 0o777) == 0o700


def test_a_good_state_is_restored_from_after_its_header(tmp_path: Path) -> None:
    folder = tmp_path / "states"
    write_state(folder / "k1.vmstate", "k1")
    said = Said()
    choice = said.choose("k1", folder)
    try:
        assert choice.fd >= 0 and not choice.save
        assert os.get_inheritable(choice.fd)  # it goes to the relay, then to qemu
        assert os.read(choice.fd, 100) == b"QEVM stream"
    finally:
        choice.close()
    assert not said.progress and not said.warnings


def test_a_state_with_another_keys_header_boots_cold_and_is_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "states"
    write_state(folder / "k1.vmstate", "stale-key")
    said = Said()
    choice = said.choose("k1", folder)
    assert choice.fd == -1 and choice.save == str(folder / "k1.vmstate")
    assert len(said.warnings) == 1 and "header is not this configuration's" in said.warnings[0]


def test_a_state_others_may_read_or_write_is_not_restored(tmp_path: Path) -> None:
    folder = tmp_path / "states"
    write_state(folder / "k1.vmstate", "k1", mode=0o644)
    said = Said()
    choice = said.choose("k1", folder)
    assert choice.fd == -1 and choice.save
    assert len(said.warnings) == 1 and "mode 644" in said.warnings[0]


def test_a_state_of_another_owner_is_not_restored(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    folder = tmp_path / "states"
    write_state(folder / "k1.vmstate", "k1")
    os.chown(folder / "k1.vmstate", 12345, 12345)
    said = Said()
    choice = said.choose("k1", folder)
    assert choice.fd == -1 and choice.save
    assert len(said.warnings) == 1 and "owned by uid 12345" in said.warnings[0]


def test_a_symbolic_link_is_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "states"
    folder.mkdir(mode=0o700)
    write_state(tmp_path / "elsewhere", "k1")
    (folder / "k1.vmstate").symlink_to(tmp_path / "elsewhere")
    said = Said()
    choice = said.choose("k1", folder)
    assert choice.fd == -1 and choice.save and len(said.warnings) == 1


def test_a_state_older_than_a_day_is_renewed_and_old_ones_swept(tmp_path: Path) -> None:
    folder = tmp_path / "states"
    write_state(folder / "k1.vmstate", "k1")
    write_state(folder / "other.vmstate", "other")
    (folder / "k1.vmstate.99.tmp").write_bytes(b"half")
    later = time.time() + state.RENEW_AFTER + 60
    said = Said()
    choice = said.choose("k1", folder, now=later)
    assert choice.fd == -1 and choice.save == str(folder / "k1.vmstate")
    assert said.progress and "renewing" in said.progress[0] and not said.warnings
    # another configuration's state of the same age, and a killed save: removed
    assert sorted(p.name for p in folder.iterdir()) == ["k1.vmstate"]
