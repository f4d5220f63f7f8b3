"""``providers/descriptors.close_inherited``: every descriptor above 2 but the kept ones."""

from __future__ import annotations

import os

from pysandboxes.providers import descriptors


def _open_after_closing(keep: list[int], opened: list[int]) -> set[int]:
    """Fork, close in the child, report which of ``opened`` are still open there."""

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(write, 2)  # the report goes through fd 2, which is always kept
            descriptors.close_inherited(keep)
            alive = []
            for fd in opened:
                try:
                    os.fstat(fd)
                    alive.append(fd)
                except OSError:
                    pass
            os.write(2, " ".join(map(str, alive)).encode())
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1000):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return {int(word) for word in data.split()}


def test_closes_all_but_the_kept_ones() -> None:
    opened = [os.open(os.devnull, os.O_RDONLY) for _ in range(6)]
    high = os.dup2(opened[0], 900, inheritable=True)
    try:
        keep = [opened[1], opened[4]]
        assert _open_after_closing(keep, [*opened, high]) == set(keep)
        assert _open_after_closing([], [*opened, high]) == set()
        assert _open_after_closing([high, 0, 1], [*opened, high]) == {high}
    finally:
        for fd in (*opened, high):
            os.close(fd)


def test_explain_lists_what_is_passed() -> None:
    enforcing = descriptors.passed("enforce")
    assert enforcing[0][0] == "0, 1, 2"
    assert len(descriptors.passed("learn")) == len(enforcing) + 1
