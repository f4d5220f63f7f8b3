"""The guest kernel and initramfs builder of os-sandbox=qemu: cpio writer, module resolution,
vmlinux extraction, kernel search (against synthetic files, and the real kernel when present)."""

from __future__ import annotations

import lzma
import os
import stat
import struct
from pathlib import Path

import pytest

from pysandboxes.errors import ProviderUnavailableError
from pysandboxes.providers import _qemu_kernel as qk
from tests.helpers import require


def elf_with_sections(sections: dict[str, bytes]) -> bytes:
    """A minimal 64-bit little-endian ELF relocatable file holding ``sections``."""

    names = b"\0" + b"".join(name.encode() + b"\0" for name in (*sections, ".shstrtab"))
    body = b""
    offsets = []
    for data in sections.values():
        offsets.append(64 + len(body))
        body += data
    shstr_offset = 64 + len(body)
    body += names
    shoff = 64 + len(body)
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 0, 0)
    count = len(sections) + 2
    header = header[:60] + struct.pack("<HH", count, count - 1)
    table = bytes(64)  # the null section
    name_pos = 1
    for (name, data), offset in zip(sections.items(), offsets, strict=True):
        table += struct.pack("<IIQQQQIIQQ", name_pos, 1, 0, 0, offset, len(data), 0, 0, 1, 0)
        name_pos += len(name) + 1
    table += struct.pack("<IIQQQQIIQQ", name_pos, 3, 0, 0, shstr_offset, len(names), 0, 0, 1, 0)
    return header + body + table


def module(depends: str) -> bytes:
    info = f"license=GPL\0depends={depends}\0name=x\0".encode()
    return elf_with_sections({".text": b"\x90" * 8, ".modinfo": info})


def test_modinfo_reads_the_section() -> None:
    info = qk.modinfo(module("a,b"))
    assert info["depends"] == ["a,b"]
    assert info["license"] == ["GPL"]


def test_modinfo_refuses_what_is_not_an_elf_module() -> None:
    with pytest.raises(ValueError):
        qk.modinfo(b"MZ not an elf")


def fake_modules(root: Path, graph: dict[str, str], builtin: tuple[str, ...] = ()) -> Path:
    modules = root / "lib" / "modules" / "6.1.0-test"
    (modules / "kernel" / "drivers").mkdir(parents=True)
    for name, depends in graph.items():
        (modules / "kernel" / "drivers" / f"{name.replace('_', '-')}.ko").write_bytes(
            module(depends)
        )
    (modules / "modules.builtin").write_text("".join(f"kernel/x/{b}.ko\n" for b in builtin))
    return modules


def test_modules_resolve_dependencies_first_and_skip_builtins(tmp_path: Path) -> None:
    modules = fake_modules(
        tmp_path,
        {"9p": "9pnet,netfs", "9pnet": "", "netfs": "fscache", "fscache": "", "virtio_net": ""},
        builtin=("virtio",),
    )
    order = [name for name, _ in qk.resolve_modules(str(modules), ["9p", "virtio", "9pnet"])]
    assert order == ["9pnet", "fscache", "netfs", "9p"]
    # '-' and '_' name the same module (file virtio-net.ko).
    assert [n for n, _ in qk.resolve_modules(str(modules), ["virtio-net"])] == ["virtio_net"]


def test_a_missing_module_is_a_clear_error(tmp_path: Path) -> None:
    modules = fake_modules(tmp_path, {"9p": "9pnet"})
    with pytest.raises(ProviderUnavailableError, match="no module 9pnet"):
        qk.resolve_modules(str(modules), ["9p"])


def test_a_dependency_loop_is_an_error(tmp_path: Path) -> None:
    modules = fake_modules(tmp_path, {"a": "b", "b": "a"})
    with pytest.raises(ProviderUnavailableError, match="loop"):
        qk.resolve_modules(str(modules), ["a"])


def test_xz_modules_are_decompressed_zstd_refused(tmp_path: Path) -> None:
    data = module("")
    (tmp_path / "m.ko.xz").write_bytes(lzma.compress(data, format=lzma.FORMAT_XZ))
    assert qk.read_module(str(tmp_path / "m.ko.xz")) == data
    (tmp_path / "m.ko.zst").write_bytes(b"(\xb5/\xfd")
    with pytest.raises(ProviderUnavailableError, match="zstd"):
        qk.read_module(str(tmp_path / "m.ko.zst"))


def test_cpio_round_trip_with_every_entry_kind() -> None:
    archive = qk.Cpio()
    archive.directory("bin")
    archive.file("bin/busybox", b"\x7fELF" + b"x" * 13, 0o755)
    archive.symlink("bin/sh", "busybox")
    archive.char_device("dev/console", 5, 1)
    data = archive.finish()
    assert len(data) % 512 == 0
    entries = qk.parse_cpio(data)
    assert stat.S_ISDIR(entries["bin"][0])
    assert entries["bin/busybox"] == (stat.S_IFREG | 0o755, b"\x7fELF" + b"x" * 13)
    assert entries["bin/sh"] == (stat.S_IFLNK | 0o777, b"busybox")
    assert stat.S_ISCHR(entries["dev/console"][0])


def test_initrd_holds_busybox_modules_in_order_and_init(tmp_path: Path) -> None:
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"\x7fELF-static")
    modules = fake_modules(tmp_path, {"9p": "9pnet", "9pnet": ""})
    resolved = qk.resolve_modules(str(modules), ["9p"])
    entries = qk.parse_cpio(qk.build_initrd(str(busybox), resolved))
    assert entries["bin/busybox"][1] == b"\x7fELF-static"
    assert entries["modules"][1] == b"9pnet 9p\n"
    assert entries["lib/modules/9p.ko"][1] == module("9pnet")
    init_mode, init = entries["init"]
    assert init_mode & 0o111 and init.startswith(b"#!/bin/busybox sh")
    assert b"pysbroot /newroot" in init and b"name" in init


def test_vmlinux_is_extracted_from_an_xz_payload() -> None:
    elf = b"\x7fELF" + bytes(200)
    image = b"MZ" + bytes(100) + lzma.compress(elf, format=lzma.FORMAT_XZ) + b"trailer"
    assert qk.extract_vmlinux(image) == elf
    assert qk.extract_vmlinux(b"MZ no payload here") is None


def test_static_elf_check(tmp_path: Path) -> None:
    assert not qk.is_static_elf("/nonexistent")
    (tmp_path / "text").write_text("#!/bin/sh\n")
    assert not qk.is_static_elf(str(tmp_path / "text"))
    # The interpreter itself is dynamically linked.
    assert not qk.is_static_elf(os.path.realpath("/usr/bin/python3"))


def test_kernel_search_names_every_reason(tmp_path: Path) -> None:
    with pytest.raises(ProviderUnavailableError, match="bzImage: no such file"):
        qk.find_kernel(str(tmp_path / "bzImage"))
    (tmp_path / "bzImage").write_bytes(b"MZ")
    with pytest.raises(ProviderUnavailableError, match="cannot tell its version"):
        qk.find_kernel(str(tmp_path / "bzImage"))
    image = tmp_path / "boot" / "vmlinuz-6.1.0-test"
    image.parent.mkdir()
    image.write_bytes(b"MZ")
    with pytest.raises(ProviderUnavailableError, match="no modules directory"):
        qk.find_kernel(str(image))
    fake_modules(tmp_path, {"virtio_pci": ""})
    with pytest.raises(ProviderUnavailableError, match="no module"):
        qk.find_kernel(str(image))


def test_the_real_kernel_has_what_the_guest_needs() -> None:
    try:
        kernel = qk.find_kernel()
    except ProviderUnavailableError as exc:
        require(False, f"no guest kernel: {exc} ({qk.INSTALL_HINT})")
        raise
    names = [name for name, _ in qk.resolve_modules(kernel.modules, qk.WANTED_MODULES)]
    for needed in ("virtio_console", "9pnet_virtio", "9p"):
        assert needed in names
    assert names.index("9pnet") < names.index("9pnet_virtio") < names.index("9p")


def test_building_the_cache_is_told_and_a_cache_hit_is_not(tmp_path: Path) -> None:
    """The first run's seconds of decompression are announced step by step (issue 29); the
    second finds both artefacts and says nothing. The real kernel and busybox, a fresh cache."""

    try:
        kernel = qk.find_kernel()
    except ProviderUnavailableError as exc:
        require(False, f"no guest kernel: {exc} ({qk.INSTALL_HINT})")
        raise
    busybox = qk.find_busybox()
    require(busybox is not None, f"no static busybox ({qk.INSTALL_HINT})")
    assert busybox is not None
    told: list[str] = []
    built = qk.prepare_artefacts(
        kernel, busybox, network=False, cache=str(tmp_path), progress=told.append
    )
    assert len(told) == 2, told
    assert "initramfs" in told[0] and "kernel" in told[1]
    again: list[str] = []
    assert (
        qk.prepare_artefacts(
            kernel, busybox, network=False, cache=str(tmp_path), progress=again.append
        ).initrd
        == built.initrd
    )
    assert again == []
