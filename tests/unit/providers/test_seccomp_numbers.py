"""The system call numbers of ``providers/_linux.py`` against the kernel headers of this machine.

A wrong number in a seccomp filter denies the wrong call and lets the right one through, so the
tables are checked against ``asm/unistd_64.h`` (x86_64) and ``asm-generic/unistd.h`` (the table
aarch64 uses). Names newer than the installed headers are skipped one by one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pysandboxes.providers import _linux
from tests.helpers import require

HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


def header_numbers(path: Path) -> dict[str, int]:
    numbers: dict[str, int] = {}
    for match in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", path.read_text()):
        numbers.setdefault(match.group(1), int(match.group(2)))
    return numbers


@pytest.mark.parametrize("arch", sorted(HEADERS))
def test_numbers_match_the_kernel_headers(arch: str) -> None:
    header = HEADERS[arch]
    require(header.exists(), f"{header} missing (apt-get install linux-libc-dev)")
    known = header_numbers(header)
    checked = 0
    for name, number in _linux.SYSCALLS[arch].items():
        if name in known:
            assert known[name] == number, f"{arch} {name}: header says {known[name]}"
            checked += 1
    assert checked >= len(_linux.SYSCALLS[arch]) - 2  # at most the newest calls are missing
