"""Files: reading outside the exposures (three ways), writing where no rule grants it, links."""

from __future__ import annotations

import os
import stat

import pytest

from tests.helpers import require
from tests.redteam.hostile.harness import (
    Scene,
    assert_reached,
    assert_refused,
    expect_refusal,
)

READS = ["read_open.py", "read_libc.py", "read_child.py"]


@pytest.mark.kernel
@pytest.mark.parametrize("program", READS)
def test_read_outside_exposures(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, program: str
) -> None:
    objective = program.removesuffix(".py")
    expect_refusal(request, kernel_provider, objective)
    args = (str(scene.secret), scene.secret_text)
    assert_reached(scene.control(program, *args))
    # ENOENT: a provider that builds the file tree from the exposures only (bwrap).
    verdict = scene.sandboxed(kernel_provider, program, *args)
    assert_refused(verdict, ["EACCES", "ENOENT"], provider=kernel_provider)


@pytest.mark.kernel
def test_write_into_read_only_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "write_ro")
    verdict = scene.sandboxed(kernel_provider, "write_file.py", "write_ro", str(scene.ro / "x"))
    assert_refused(verdict, ["EACCES", "EROFS"], provider=kernel_provider)
    assert not (scene.ro / "x").exists()
    assert_reached(scene.control("write_file.py", "write_ro", str(scene.ro / "x")))


@pytest.mark.kernel
def test_write_into_host_tmp(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "write_tmp")
    target = scene.root.parent / f"{scene.root.name}-host-tmp-file"  # host /tmp, not exposed
    assert str(target).startswith("/tmp/")
    verdict = scene.sandboxed(kernel_provider, "write_file.py", "write_tmp", str(target))
    assert not target.exists(), f"{kernel_provider}: the file appeared in the host's /tmp"
    if not verdict["reached"]:
        assert_refused(verdict, ["EACCES", "EROFS", "ENOENT"], provider=kernel_provider)
    # else: written into a private /tmp of the sandbox (checked above: not the host's)
    try:
        assert_reached(scene.control("write_file.py", "write_tmp", str(target)))
    finally:
        target.unlink(missing_ok=True)


@pytest.mark.kernel
@pytest.mark.parametrize("program", ["link_symlink.py", "link_hard.py"])
def test_link_to_secret_from_writable_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, program: str
) -> None:
    objective = program.removesuffix(".py")
    expect_refusal(request, kernel_provider, objective)
    args = (str(scene.secret), scene.secret_text, str(scene.work))
    verdict = scene.sandboxed(kernel_provider, program, *args)
    # symlink: created, but reading through it is judged at the target (EACCES, or ENOENT where
    # the target is absent); hard link: refused when made (EXDEV: Landlock's refer rule).
    assert_refused(verdict, ["EACCES", "ENOENT", "EXDEV", "EPERM"], provider=kernel_provider)
    for leftover in scene.work.iterdir():
        leftover.unlink()
    assert_reached(scene.control(program, *args))


@pytest.mark.kernel
def test_chmod_outside_exposures(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    expect_refusal(request, kernel_provider, "chmod_outside")
    scene.secret.chmod(0o600)
    verdict = scene.sandboxed(kernel_provider, "chmod_outside.py", str(scene.secret))
    changed = scene.secret.stat().st_mode & 0o777
    scene.secret.chmod(0o600)
    assert changed == 0o600, f"{kernel_provider}: mode changed to {changed:o} from the sandbox"
    assert_refused(verdict, ["EACCES", "EPERM", "ENOENT", "EROFS"], provider=kernel_provider)
    assert_reached(scene.control("chmod_outside.py", str(scene.secret)))


@pytest.mark.kernel
@pytest.mark.parametrize("how", ["chmod", "setgid", "fchmod", "chmodat", "create", "mknod"])
def test_leave_set_id_file_in_writable_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, how: str
) -> None:
    """Issue 23, class 6: the sandbox's mounts are nosuid, but the host's are not: a
    set-user-ID file left in a writable exposure runs with its owner's rights afterwards."""

    expect_refusal(request, kernel_provider, "setuid_" + how)
    planted = scene.work / "escalate"
    verdict = scene.sandboxed(kernel_provider, "setuid_file.py", how, str(scene.work))
    left = planted.stat().st_mode if planted.exists() else 0
    planted.unlink(missing_ok=True)
    assert not left & 0o6000, f"{kernel_provider}: {planted} left with mode {left:o}"
    assert_refused(verdict, ["EPERM", "EACCES"], provider=kernel_provider)
    assert_reached(scene.control("setuid_file.py", how, str(scene.work)))
    planted.unlink(missing_ok=True)


@pytest.mark.kernel
@pytest.mark.parametrize("how", ["chmod", "utime", "xattr"])
def test_metadata_of_read_only_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, how: str
) -> None:
    """Issue 23, class 7: chmod 0666 of a rule file in a read-only exposure, utime of a
    read-only file: a read-only bind refuses them; Landlock has no metadata right."""

    expect_refusal(request, kernel_provider, "metadata_ro_" + how)
    target = scene.ro / "rules.py-sandboxes"
    target.write_text("expose-ro=.\n")
    target.chmod(0o644)
    before = target.stat()
    verdict = scene.sandboxed(kernel_provider, "metadata_ro.py", how, str(target))
    after = target.stat()
    assert (after.st_mode, int(after.st_mtime)) == (before.st_mode, int(before.st_mtime))
    assert_refused(verdict, ["EROFS", "EACCES", "EPERM", "ENOENT"], provider=kernel_provider)
    control = scene.control("metadata_ro.py", how, str(target))
    require(
        how != "xattr" or control["errno"] != "EOPNOTSUPP",
        "the test's file system has no user extended attributes (the control cannot reach)",
    )
    assert_reached(control)


@pytest.mark.kernel
def test_metadata_limit_is_announced_with_read_only_exposures(
    kernel_provider: str, scene: Scene
) -> None:
    """Where the kernel layer leaves metadata alone (landlock), the start says so, naming
    read-only exposures (the announcement spoke of metadata outside the exposures only)."""

    verdict = scene.sandboxed(kernel_provider, "read_open.py", str(scene.secret), "x")
    announced = "in read-only exposures too" in verdict["_stderr"]
    assert announced == (kernel_provider == "landlock"), verdict["_stderr"]


@pytest.mark.kernel
def test_write_into_host_fifo_in_read_only_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    """Issue 23, class 5's sibling: a read-only mount refuses writes to files and directories,
    not to a FIFO (nor a socket, a device): a host process reading it gets what is written."""

    expect_refusal(request, kernel_provider, "fifo_write")
    fifo = scene.ro / "commands.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the host's reader: held open
    try:
        verdict = scene.sandboxed(kernel_provider, "fifo_write.py", str(fifo))
        try:
            got = os.read(reader, 100)
        except BlockingIOError:
            got = b""
        assert got == b"", f"{kernel_provider}: the host's reader got {got!r}"
        refusals = ["EACCES", "EROFS", "EPERM", "ENOENT", "ENXIO"]
        assert_refused(verdict, refusals, provider=kernel_provider)
        assert_reached(scene.control("fifo_write.py", str(fifo)))
        assert os.read(reader, 100) == b"injected from the sandbox\n"
    finally:
        os.close(reader)
        fifo.unlink()


@pytest.mark.kernel
def test_write_to_device_node_in_read_only_exposure(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    """A device node in an exposure (here a copy of /dev/null's: harmless to write) is
    reached through a read-only mount; the sandbox's binds are ``nodev``."""

    require(os.geteuid() == 0, "making a device node needs root")
    expect_refusal(request, kernel_provider, "device_write")
    node = scene.ro / "device"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    try:
        verdict = scene.sandboxed(kernel_provider, "device_write.py", str(node))
        assert_refused(verdict, ["EACCES", "EPERM", "EROFS"], provider=kernel_provider)
        assert_reached(scene.control("device_write.py", str(node)))
    finally:
        node.unlink()


@pytest.mark.kernel
def test_special_files_in_read_only_exposures_are_announced(
    kernel_provider: str, scene: Scene
) -> None:
    """Where the kernel layer cannot refuse a FIFO (or a socket bound later) in a read-only
    exposure, the run says so at start (bwrap, unshare)."""

    verdict = scene.sandboxed(kernel_provider, "read_open.py", str(scene.secret), "x")
    announced = "named pipe (FIFO)" in verdict["_stderr"]
    assert announced == (kernel_provider in ("bwrap", "unshare")), verdict["_stderr"]


@pytest.mark.kernel
def test_legitimate_file_work_keeps_working(kernel_provider: str, scene: Scene) -> None:
    failed = scene.legit(
        kernel_provider, "legit_files.py", str(scene.ro / "public.txt"), str(scene.work)
    )
    assert not failed, f"{kernel_provider}: legitimate steps failed: {failed}"
