"""The capability table (``platform_caps``) and the hand-over channel it chooses (issue 19).

The channel tests run real pipes and a real writer process; only the table the channel reads
is swapped for the profile under test (the same table ``PYSANDBOXES_PORTABLE`` selects)."""

from __future__ import annotations

import os
import sys

import pytest

from pysandboxes import platform_caps
from pysandboxes.launch import channel as channel_module
from pysandboxes.launch.channel import Channel
from pysandboxes.platform_caps import Capabilities, profile_from


def test_profiles_turn_off_the_linux_only_features() -> None:
    native = Capabilities("")
    posix = Capabilities("posix")
    spawn = Capabilities("spawn")
    for caps in (posix, spawn):
        assert not caps.linux and not caps.memfd and not caps.proc
        assert not caps.sigwaitinfo and not caps.pidfd
    assert posix.exec == (os.name == "posix") and posix.fork == hasattr(os, "fork")
    assert not spawn.exec and not spawn.fork
    if sys.platform.startswith("linux"):
        assert native.linux and native.memfd and native.proc and native.exec
    assert native.profile == "" and posix.profile == "posix" and spawn.profile == "spawn"


@pytest.mark.parametrize(
    ("value", "profile"),
    [("", ""), ("0", ""), ("1", "posix"), ("posix", "posix"), ("spawn", "spawn"), (" 1 ", "posix")],
)
def test_switch_values(value: str, profile: str) -> None:
    assert profile_from({"PYSANDBOXES_PORTABLE": value}) == profile


@pytest.mark.parametrize("value", ["yes", "win32", "2"])
def test_unknown_switch_value_is_an_error(value: str) -> None:
    with pytest.raises(ValueError, match="a switch for tests only"):
        profile_from({"PYSANDBOXES_PORTABLE": value})


def test_reason_names_the_feature_and_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform_caps, "CAPS", Capabilities("posix"))
    text = platform_caps.not_here("Landlock")
    assert text.startswith("Landlock is not available on this platform")
    assert "PYSANDBOXES_PORTABLE" in text


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


#: The exec path's pipe, checked in a process of its own: the end of file it waits for comes
#: when every copy of the write end is closed, and in a test process that has run hundreds of
#: other tests, a process they forked could hold one (the test hung there twice in full runs,
#: never alone). python-sb's launcher makes the channel and execs at once.
_BEFORE_EXEC = """
import os, sys
from pysandboxes.launch import channel as channel_module
from pysandboxes.platform_caps import Capabilities
channel_module.CAPS = Capabilities("posix")
data = os.urandom(int(sys.argv[1]))
channel = channel_module.Channel(data, spawn=False)
assert channel.kind == "pipe" and channel.token == channel.fd
assert os.get_inheritable(channel.fd)
channel.before_exec()  # the write end is closed here; a writer finishes a large one
chunks = []
while chunk := os.read(channel.fd, 1 << 16):
    chunks.append(chunk)
channel.close()
assert b"".join(chunks) == data, "not what was written"
try:
    os.wait()
except ChildProcessError:  # the writer is nobody's child here
    print("ok")
"""


@pytest.mark.parametrize("size", [10, 3 << 20])  # fits the pipe; needs the writer process
def test_pipe_channel_before_exec(size: int) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", _BEFORE_EXEC, str(size)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


def test_pipe_channel_after_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spawned: the parent writes once the child runs (here a thread stands for the child's
    read, which must run concurrently with a write larger than the pipe)."""

    import threading

    monkeypatch.setattr(channel_module, "CAPS", Capabilities("spawn"))
    data = os.urandom(1 << 20)
    channel = Channel(data, spawn=True)
    reader = os.dup(channel.fd)
    got: list[bytes] = []
    thread = threading.Thread(target=lambda: got.append(_read_all(reader)))
    thread.start()
    channel.after_spawn()  # closes python-sb's copy of the read end, writes, closes
    thread.join(30)
    os.close(reader)
    assert got == [data] and channel.fd == -1


def test_memfd_channel_is_the_default_on_linux() -> None:
    if not channel_module.CAPS.memfd:
        pytest.skip("no memfd on this platform (or PYSANDBOXES_PORTABLE forces the pipe)")
    channel = Channel(b"abc", spawn=False)
    try:
        assert channel.kind == "memfd"
        os.lseek(channel.fd, 0, os.SEEK_SET)
        assert os.read(channel.fd, 10) == b"abc"
    finally:
        channel.close()


def test_ignore_globs_follow_the_platforms_case(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from pysandboxes.policy.decide import glob_regex

    monkeypatch.setattr(platform_caps, "CAPS", Capabilities(""))
    sensitive = re.compile(glob_regex("*.env"))
    monkeypatch.setattr(platform_caps, "CAPS", Capabilities("posix"))
    insensitive = re.compile(glob_regex("*.env"))
    if sys.platform.startswith("linux"):
        assert sensitive.fullmatch("a.env") and not sensitive.fullmatch("a.ENV")
    assert insensitive.fullmatch("a.ENV") and not insensitive.fullmatch("a.ENVx")


def test_adopt_takes_a_forced_profile_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform_caps, "CAPS", Capabilities(""))
    platform_caps.adopt("")
    assert platform_caps.CAPS.profile == ""
    platform_caps.adopt("spawn")
    assert platform_caps.CAPS.profile == "spawn" and not platform_caps.CAPS.exec
