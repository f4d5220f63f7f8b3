"""The eval channel's deadline covers the whole exchange (issue 25, class 5): a peer that
trickles its frame byte by byte gets no more time than one that sends nothing; a frame is
joined once (not copied per chunk); a frame over the reader's bound is refused unread."""

from __future__ import annotations

import os
import threading
import time

import pytest

from pysandboxes.evalguard import channel


def _writer(fd: int, data: bytes, step: int, pause: float, stop: threading.Event) -> None:
    for at in range(0, len(data), step):
        if stop.is_set():
            return
        try:
            os.write(fd, data[at : at + step])
        except OSError:
            return
        time.sleep(pause)


def test_a_trickled_frame_gets_one_deadline_for_the_whole_frame() -> None:
    read_fd, write_fd = os.pipe()
    stop = threading.Event()
    frame = channel.frame(channel.RESULT, b"x" * 100_000)  # 100,000 s at one byte per ms
    thread = threading.Thread(target=_writer, args=(write_fd, frame, 1, 0.001, stop))
    thread.start()
    try:
        start = time.monotonic()
        assert channel.Reader(read_fd).read(start + 0.5) is None
        # the reader returned at its deadline although bytes kept coming (generous bound:
        # a loaded machine delays the return, never the deadline)
        assert time.monotonic() - start < 30
    finally:
        stop.set()
        thread.join()
        os.close(read_fd)
        os.close(write_fd)


def test_frames_in_many_chunks_are_read_whole_and_in_order() -> None:
    read_fd, write_fd = os.pipe()
    stop = threading.Event()
    frames = [
        channel.frame(channel.RESULT, b"abc"),
        channel.frame(channel.ERROR, b""),
        channel.frame(channel.RESULT, b"y" * 300_000),
        channel.frame(channel.READY, b"z"),
    ]
    thread = threading.Thread(target=_writer, args=(write_fd, b"".join(frames), 7000, 0, stop))
    thread.start()
    try:
        reader = channel.Reader(read_fd)
        got = [reader.read(time.monotonic() + 120) for _ in frames]
        assert got == [(f[4:5], f[5:]) for f in frames]
    finally:
        stop.set()
        thread.join()
        os.close(read_fd)
        os.close(write_fd)


def test_a_frame_over_the_bound_is_refused() -> None:
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, channel.frame(channel.RESULT, b"q" * 200))
        reader = channel.Reader(read_fd)
        reader.max_frame = 100
        with pytest.raises(EOFError):
            reader.read(time.monotonic() + 120)
    finally:
        os.close(read_fd)
        os.close(write_fd)
