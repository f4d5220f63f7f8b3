"""Descriptors inherited from whoever starts python-sb (issue 23, class 4).

A shell, an IDE or an agent's harness may leave descriptors open without close-on-exec. The
kernel checks a path when it is opened, not a descriptor already open: an inherited file
outside every exposure stays readable, and a directory lets ``openat(fd, name)`` walk from a
place outside the sandbox's mount namespace. python-sb closes every descriptor above 2 but
what the run passes on purpose (``providers/descriptors.py``).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.redteam.hostile.harness import (
    Scene,
    assert_reached,
    assert_refused,
    expect_refusal,
    verdict_of,
)

#: A high descriptor number (below the usual limit of 1024 soft descriptors raised by shells):
#: the old partial-mode code closed up to 65536 only; this one is above every fixed range the
#: launcher used to assume.
HIGH = 1000


def _start_with_descriptors(
    scene: Scene, provider: str | None, *, high: bool
) -> subprocess.CompletedProcess[str]:
    """Run inherited_fd.py with a file and a directory outside every exposure inherited."""

    secret_fd = os.open(scene.secret, os.O_RDONLY)
    folder_fd = os.open(scene.secret.parent, os.O_RDONLY | os.O_DIRECTORY)
    fds = [secret_fd, folder_fd]
    if high:
        fds = [os.dup2(secret_fd, HIGH), os.dup2(folder_fd, HIGH + 1)]
        os.close(secret_fd)
        os.close(folder_fd)
    try:
        proc = scene.spawn(
            provider, "inherited_fd.py", scene.secret.name, scene.secret_text, pass_fds=fds
        )
        out, err = proc.communicate(timeout=120)
    finally:
        for fd in fds:
            os.close(fd)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.kernel
@pytest.mark.parametrize("high", [False, True], ids=["low", "high"])
def test_descriptors_inherited_from_the_caller_are_closed(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene, high: bool
) -> None:
    expect_refusal(request, kernel_provider, "inherited_fd")
    control = _start_with_descriptors(scene, None, high=high)
    assert_reached(verdict_of(control.stdout, control.stderr, control.returncode, "control"))
    done = _start_with_descriptors(scene, kernel_provider, high=high)
    verdict = verdict_of(done.stdout, done.stderr, done.returncode, "inherited_fd")
    # No errno: the descriptors are simply not there.
    assert_refused(verdict, [None], provider=kernel_provider)


@pytest.mark.kernel
def test_descriptors_closed_in_a_supervised_run(
    request: pytest.FixtureRequest, kernel_provider: str, scene: Scene
) -> None:
    """The same with a network rule: python-sb stays as the parent of bwrap (always) and of
    unshare's setup step (with a network), whose fork closes them too; landlock still execs."""

    expect_refusal(request, kernel_provider, "inherited_fd")
    scene.rules_file.write_text(
        scene.rules_file.read_text() + "net=ALLOW|TCP|*|9|OUT\n"  # any host: landlock accepts it
    )
    done = _start_with_descriptors(scene, kernel_provider, high=False)
    verdict = verdict_of(done.stdout, done.stderr, done.returncode, "inherited_fd")
    assert_refused(verdict, [None], provider=kernel_provider)
