"""qemu's command line and the accelerator choice of os-sandbox=qemu (no VM started)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError, ProviderUnavailableError
from pysandboxes.providers import qemu

BASE = {
    "qemu": "/usr/bin/qemu-system-x86_64",
    "kernel": "/cache/vmlinux",
    "initrd": "/cache/initrd.cpio",
    "memory": "512M",
    "cpus": "1",
    "export": "/tmp/pysb-qemu-x/root",
    "console": "/tmp/pysb-qemu-x/console.log",
    "python": "/usr/bin/python3.11",
    "src": "/work/src",
}


def option(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv) if word == name]


def test_no_network_device_without_net_rules() -> None:
    argv = qemu.qemu_argv(accel="tcg", **BASE)
    assert "-netdev" not in argv
    assert not any("virtio-net" in word for word in argv)
    assert "-nodefaults" in argv and "-no-user-config" in argv and "-no-reboot" in argv


def test_network_device_and_forwards_with_rules() -> None:
    argv = qemu.qemu_argv(accel="tcg", network=True, forwards=[("tcp", 8080)], **BASE)
    (netdev,) = option(argv, "-netdev")
    assert netdev.startswith("user,") and "hostfwd=tcp::8080-:8080" in netdev
    assert "virtio-net-device,netdev=net" in option(argv, "-device")


def test_one_share_of_the_composed_tree_and_the_port_on_a_descriptor() -> None:
    argv = qemu.qemu_argv(accel="tcg", **BASE)
    (fsdev,) = option(argv, "-fsdev")
    assert f"path={BASE['export']}," in fsdev
    assert "path=/," not in fsdev
    assert "socket,id=port,fd={port_fd}" in option(argv, "-chardev")
    assert "virtserialport,chardev=port,name=pysb" in option(argv, "-device")


def test_qemu_confines_itself() -> None:
    argv = qemu.qemu_argv(accel="kvm", **BASE)
    (sandbox,) = option(argv, "-sandbox")
    for part in ("on", "spawn=deny", "elevateprivileges=deny", "resourcecontrol=deny"):
        assert part in sandbox.split(",")


def test_accelerator_specific_options() -> None:
    tcg = qemu.qemu_argv(accel="tcg", tsc=2_000_000, **BASE)
    assert option(tcg, "-accel") == ["tcg"] and option(tcg, "-cpu") == ["max"]
    assert "tsc_early_khz=2000000" in option(tcg, "-append")[0].split()
    kvm = qemu.qemu_argv(accel="kvm", tsc=2_000_000, **BASE)
    assert option(kvm, "-accel") == ["kvm"] and option(kvm, "-cpu") == ["host"]
    assert "tsc_early_khz" not in option(kvm, "-append")[0]


def test_nothing_of_the_run_is_on_the_kernel_command_line() -> None:
    """A saved state is restored whatever the command line says: the interpreter and the source
    directory go to /init on the port (the parameter line), not on the command line."""

    (append,) = option(qemu.qemu_argv(accel="tcg", **BASE), "-append")
    words = append.split()
    assert not any(word.startswith("pysb_") or "/work/src" in word for word in words)
    assert "cryptomgr.notests" in words  # a third of a second of boot under TCG
    assert qemu.params_line(BASE["python"], BASE["src"]) == "/usr/bin/python3.11 /work/src"


@pytest.mark.parametrize("path", ["/opt/my python/bin/python3", "/opt/it's/python3"])
def test_paths_the_parameter_line_cannot_carry_are_refused(path: str) -> None:
    with pytest.raises(ConfigError, match="parameter line"):
        qemu.qemu_argv(accel="tcg", **{**BASE, "python": path})


def test_accelerator_choice() -> None:
    assert qemu.choose_accelerator("tcg") == ("tcg", "")
    problem = qemu.kvm_problem()
    if problem:
        assert qemu.choose_accelerator("auto") == ("tcg", problem)
        with pytest.raises(ProviderUnavailableError, match=r"qemu\.accel=kvm"):
            qemu.choose_accelerator("kvm")
    else:
        assert qemu.choose_accelerator("auto") == ("kvm", "")
        assert qemu.choose_accelerator("kvm") == ("kvm", "")


def test_byte_code_is_written_ahead_where_missing_or_older(tmp_path: Path) -> None:
    """The guest reads the package through a read-only share: the host compiles it first."""

    package = tmp_path / "pysandboxes" / "sub"
    package.mkdir(parents=True)
    source = package / "mod.py"
    source.write_text("X = 1\n")
    (package / "__pycache__").mkdir()
    tag = sys.implementation.cache_tag
    assert qemu.compile_ahead(str(tmp_path)) == [str(source)]
    compiled = package / "__pycache__" / f"mod.{tag}.pyc"
    assert compiled.exists()
    assert qemu.compile_ahead(str(tmp_path)) == []  # up to date: nothing to do
    later = compiled.stat().st_mtime_ns + 10**9
    os.utime(source, ns=(later, later))
    assert qemu.compile_ahead(str(tmp_path)) == [str(source)]


def test_the_denials_file_is_a_placeholder_in_the_vm() -> None:
    """--denials=FILE: the namespace plan binds the host's file read-write; the VM's tree gets
    an empty placeholder instead (the guest binds a pipe over it), every other entry as is."""

    from pysandboxes.providers._ns_mounts import Mount

    denials = "/home/u/denials.jsonl"
    assert qemu._guest_mount(Mount("bind", denials, denials), denials) == [
        "file",
        denials,
        "",
        b"",
        0o600,
    ]
    project = "/home/u/project"
    assert qemu._guest_mount(Mount("bind", project, project), denials) == [
        "bind",
        project,
        project,
        b"",
        0o755,
    ]
    assert qemu._guest_mount(Mount("bind", denials, denials), "")[0] == "bind"


def test_a_first_run_says_what_it_builds_and_a_cached_one_says_nothing(tmp_path: Path) -> None:
    """Issue 29: the first qemu run spent seconds building its cache in silence. Each step
    that builds something is told (byte code for the guest, initramfs, kernel), then the boot;
    a run that finds everything built prints nothing."""

    import io

    package = tmp_path / "src" / "pysandboxes"
    package.mkdir(parents=True)
    (package / "mod.py").write_text("X = 1\n")
    stream = io.StringIO()
    progress = qemu.FirstRunProgress(stream)
    qemu.compile_ahead(str(tmp_path / "src"), progress=progress)
    assert stream.getvalue() == (
        "python-sb: qemu: compiling 1 of python-sb's modules for the guest (once)\n"
    )
    progress.booting("tcg")
    assert stream.getvalue().splitlines()[-1].startswith("python-sb: qemu: booting the VM")

    quiet = io.StringIO()
    cached = qemu.FirstRunProgress(quiet)
    qemu.compile_ahead(str(tmp_path / "src"), progress=cached)  # up to date
    cached.booting("tcg")
    assert quiet.getvalue() == ""
