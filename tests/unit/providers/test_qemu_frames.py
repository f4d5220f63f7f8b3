"""The frame codec of os-sandbox=qemu's one channel, and the checks of the run description."""

from __future__ import annotations

import marshal

import pytest

from pysandboxes.providers import _qemu_frames as frames


def run_description(**changes: object) -> dict[str, object]:
    run: dict[str, object] = {
        "format": frames.RUN_FORMAT,
        "argv": ["/usr/bin/python3", "-c", "print(1)"],
        "env": {"PATH": "/usr/bin"},
        "cwd": "/tmp",
        "uid": 1000,
        "gid": 1000,
        "hostname": "python-sb",
        "run_fd": 3,
        "run_data": b"12\nheader",
        "record_fd": -1,
        "denials_path": "",
        "tty": [],
        "winsize": [],
        "seccomp": b"",
        "net": False,
        "loopback_tcp": [5432],
    }
    run.update(changes)
    return run


def test_frames_round_trip_in_any_split() -> None:
    stream = (
        frames.encode(b"O", b"hello")
        + frames.encode(b"B")
        + frames.encode(b"X", frames.encode_status(-15))
    )
    for cut in range(len(stream) + 1):
        decoder = frames.Decoder(frames.GUEST_TYPES)
        got = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:])
        assert got == [(b"O", b"hello"), (b"B", b""), (b"X", frames.encode_status(-15))]
        assert decoder.pending == 0


def test_partial_frame_waits_for_the_rest() -> None:
    decoder = frames.Decoder(frames.HOST_TYPES)
    data = frames.encode(b"I", b"x" * 1000)
    assert decoder.feed(data[:500]) == []
    assert decoder.pending == 500
    assert decoder.feed(data[500:]) == [(b"I", b"x" * 1000)]


def test_a_type_the_peer_may_not_send_is_refused() -> None:
    # The guest may not send a run description, nor the host an exit status.
    with pytest.raises(frames.FrameError):
        frames.Decoder(frames.GUEST_TYPES).feed(frames.encode(b"R", b""))
    with pytest.raises(frames.FrameError):
        frames.Decoder(frames.HOST_TYPES).feed(frames.encode(b"X", frames.encode_status(0)))


def test_an_oversized_length_is_refused_before_buffering() -> None:
    header = b"O" + (frames.MAX_PAYLOAD + 1).to_bytes(4, "big")
    with pytest.raises(frames.FrameError):
        frames.Decoder(frames.GUEST_TYPES).feed(header)
    with pytest.raises(ValueError):
        frames.encode(b"O", b"x" * (frames.MAX_PAYLOAD + 1))
    with pytest.raises(ValueError):
        frames.encode(b"OO", b"")


@pytest.mark.parametrize("status", [0, 1, 7, 255, -2, -9, -15])
def test_exit_status_round_trip(status: int) -> None:
    assert frames.decode_status(frames.encode_status(status)) == status


def test_exit_status_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(frames.FrameError):
        frames.decode_status(b"\0\0\0")


def test_run_description_round_trip() -> None:
    run = run_description()
    assert frames.decode_run(frames.encode_run(run)) == run


@pytest.mark.parametrize(
    "bad",
    [
        marshal.dumps([1, 2]),
        marshal.dumps({**run_description(), "extra": 1}),
        marshal.dumps({**run_description(), "uid": "1000"}),
        marshal.dumps({**run_description(), "format": "pysb-qemu-0"}),
        marshal.dumps({**run_description(), "argv": []}),
        marshal.dumps({**run_description(), "argv": ["/bin/true", 3]}),
        marshal.dumps({**run_description(), "env": {"A": 1}}),
        marshal.dumps({**run_description(), "loopback_tcp": [0]}),
        marshal.dumps({**run_description(), "loopback_tcp": ["80"]}),
        marshal.dumps({**run_description(), "tty": [3]}),
        marshal.dumps({**run_description(), "winsize": [24]}),
        marshal.dumps({**run_description(), "winsize": [24, 1 << 16]}),
        marshal.dumps({**run_description(), "denials_path": None}),
        marshal.dumps(frozenset({1})),
        b"\xff\x00garbage",
    ],
)
def test_run_description_holds_only_the_expected_plain_data(bad: bytes) -> None:
    with pytest.raises(frames.FrameError):
        frames.decode_run(bad)


def test_the_clock_frame_carries_the_hosts_time_and_randomness() -> None:
    entropy = bytes(range(frames.ENTROPY_BYTES))
    payload = frames.encode_clock(1_796_000_000_123_456_789, entropy)
    assert frames.decode_clock(payload) == (1_796_000_000_123_456_789, entropy)
    with pytest.raises(frames.FrameError, match="clock frame"):
        frames.decode_clock(payload[:-1])
    with pytest.raises(ValueError, match="randomness"):
        frames.encode_clock(0, b"short")
    # C goes host -> guest only, P (init asking for its parameter line) guest -> host only
    assert b"C"[0] in frames.HOST_TYPES and b"C"[0] not in frames.GUEST_TYPES
    assert b"P"[0] in frames.GUEST_TYPES and b"P"[0] not in frames.HOST_TYPES
