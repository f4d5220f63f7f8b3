"""The observation of child processes (``pysandboxes.learn.children``) against the real kernel.

Each test starts a real interpreter that hands a real seccomp listener over
(:func:`hand_over`) to a real :class:`ChildObserver` in this process, then runs real programs;
what the observer recorded is compared with what they did.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pysandboxes.learn import children
from pysandboxes.learn.children import ChildObserver
from tests.helpers import require

SRC = str(Path(children.__file__).resolve().parents[2])


def available() -> None:
    reason = children.unavailable_reason()
    require(reason is None, f"seccomp user notification unavailable: {reason}")


def observe(tmp_path: Path, code: str, *, prelude: str = "") -> ChildObserver:
    """Run ``code`` in a fresh interpreter that hands its listener over first (after
    ``prelude``); the observer once it has ended."""

    tmpdir = tmp_path / "private"
    tmpdir.mkdir(exist_ok=True)
    observer = ChildObserver(str(tmpdir), {})
    observer.start()
    head = (
        f"import sys\nsys.path.insert(0, {SRC!r})\n{prelude}\n"
        "from pysandboxes.learn.children import hand_over\n"
        f"hand_over({str(tmpdir)!r})\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", head + textwrap.dedent(code)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    observer.stop()
    assert result.returncode == 0, result.stderr
    return observer


def paths(observer: ChildObserver, op: str) -> set[str]:
    return {r["path"] for r in observer.records() if r["op"] == op}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    directory = tmp_path / "data"
    directory.mkdir()
    (directory / "in.txt").write_text("hello\n")
    return directory


def test_filter_is_whole_instructions_for_each_known_architecture() -> None:
    for arch in children.NUMBERS:
        program = children.filter_program(arch)
        assert program and len(program) % 8 == 0
        # one comparison per observed call of that architecture
        assert len(program) // 8 >= len(children.NUMBERS[arch])
    with pytest.raises(ValueError, match="no system call table"):
        children.filter_program("mips")


def test_every_observed_call_has_a_spec() -> None:
    for numbers in children.NUMBERS.values():
        assert set(numbers) <= set(children.SPECS)


def test_executables_and_files_of_children_are_recorded(tmp_path: Path, data: Path) -> None:
    available()
    cat = os.path.realpath(shutil.which("cat") or "/bin/cat")
    observer = observe(
        tmp_path,
        f"""
        import subprocess
        subprocess.run([{cat!r}, "data/in.txt"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["sh", "-c", "cat data/in.txt > data/out.txt"], check=True)
        """,
    )
    assert observer.status == "observing", observer.reason
    assert cat in observer.executables
    assert str(data / "in.txt") in paths(observer, "read")
    # the shell's fork opened the redirection's target before it ran cat
    assert str(data / "out.txt") in paths(observer, "write")
    assert (data / "out.txt").read_text() == "hello\n"


def test_the_interpreters_own_opens_are_left_to_the_python_layer(
    tmp_path: Path, data: Path
) -> None:
    available()
    observer = observe(
        tmp_path,
        """
        import os
        open("data/in.txt").read()
        open("data/own.txt", "w").write("x")
        if os.fork() == 0:  # a fork that runs no other program is still the guarded interpreter
            open("data/forked.txt", "w").write("y")
            os._exit(0)
        os.wait()
        """,
    )
    assert observer.status == "observing", observer.reason
    assert observer.records() == []
    assert (data / "forked.txt").read_text() == "y"


def test_relative_paths_use_the_childs_cwd_and_dirfd(tmp_path: Path, data: Path) -> None:
    available()
    observer = observe(
        tmp_path,
        f"""
        import subprocess, sys
        subprocess.run(["cat", "in.txt"], cwd="data", check=True, stdout=subprocess.DEVNULL)
        child = (
            "import os\\n"
            "fd = os.open({str(data)!r}, os.O_RDONLY | os.O_DIRECTORY)\\n"
            "os.close(os.open('made.txt', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\\n"
        )
        subprocess.run([sys.executable, "-c", child], cwd="/", check=True)
        """,
    )
    assert str(data / "in.txt") in paths(observer, "read")
    assert str(data / "made.txt") in paths(observer, "write")


def test_threads_of_a_child_are_observed(tmp_path: Path, data: Path) -> None:
    available()
    observer = observe(
        tmp_path,
        f"""
        import subprocess, sys
        child = (
            "import threading\\n"
            "def work():\\n"
            "    open({str(data / "threaded.txt")!r}, 'w').write('t')\\n"
            "t = threading.Thread(target=work)\\n"
            "t.start()\\n"
            "t.join()\\n"
        )
        subprocess.run([sys.executable, "-c", child], check=True)
        """,
    )
    assert str(data / "threaded.txt") in paths(observer, "write")


def test_failed_probes_of_path_are_not_recorded(tmp_path: Path, data: Path) -> None:
    available()
    observer = observe(
        tmp_path,
        """
        import subprocess
        env = {"PATH": "/nonexistent/bin:/usr/bin:/bin"}
        subprocess.run(["sh", "-c", "cat data/missing.txt; true"], env=env, check=True,
                       stderr=subprocess.DEVNULL)
        """,
    )
    assert not any(p.startswith("/nonexistent") for p in observer.executables)
    assert str(data / "missing.txt") not in paths(observer, "read")
    assert observer.executables  # the shell and cat themselves were recorded


def test_system_libraries_need_no_rule(tmp_path: Path, data: Path) -> None:
    available()
    observer = observe(
        tmp_path,
        """
        import subprocess
        subprocess.run(["cat", "data/in.txt"], check=True, stdout=subprocess.DEVNULL)
        """,
    )
    granted = children.granted_everywhere()
    assert "/usr/lib" in granted and "/etc/ld.so.cache" in granted
    for path in paths(observer, "read"):
        assert not any(path == g or path.startswith(g + "/") for g in granted), path


def test_switch_turns_it_off_before_anything_is_set_up(tmp_path: Path) -> None:
    observer = ChildObserver(str(tmp_path), {children.SWITCH: "off"})
    assert observer.status == "off"
    assert children.SWITCH in observer.reason
    assert not (tmp_path / children.SOCKET_NAME).exists()
    observer.start()
    observer.stop()
    assert observer.records() == []
    lines = children.not_learned_lines(observer, ["subprocess.Popen"])
    assert "NOT observed" in lines[0] and "subprocess.Popen" in lines[0]
    assert children.not_learned_lines(observer, []) == []
    assert children.not_learned_lines(observer, ["os.fork"]) == []  # no other program ran


def test_kernel_refusal_is_reported_not_fatal(tmp_path: Path, data: Path) -> None:
    """A seccomp filter that refuses seccomp() itself (as a container's profile may): the
    program runs unobserved, and the refusal is what the summary says."""

    available()
    prelude = textwrap.dedent(
        """
        from pysandboxes.providers import _linux, seccomp as sc
        items = [
            ("stmt", sc._LD_W_ABS, sc._OFF_NR),
            ("jump", sc._JEQ_K, _linux.nr("seccomp"), None, "allow"),
            sc._ret(sc._errno("EPERM")),
            ("label", "allow"),
            sc._ret(sc._RET_ALLOW),
        ]
        sc.install(sc._assemble(items))
        """
    )
    observer = observe(
        tmp_path,
        """
        import subprocess
        subprocess.run(["cat", "data/in.txt"], check=True, stdout=subprocess.DEVNULL)
        """,
        prelude=prelude,
    )
    assert observer.status == "unavailable"
    assert observer.reason == children.refusal_text(OSError(errno.EPERM, "x"))
    assert observer.records() == []
    assert "NOT observed" in children.not_learned_lines(observer, ["subprocess.run"])[0]


def test_no_hand_over_is_reported(tmp_path: Path) -> None:
    observer = ChildObserver(str(tmp_path), {})
    observer.start()
    observer.stop()
    if children.unavailable_reason() is None:
        assert observer.status == "unavailable"
        assert "did not hand" in observer.reason
    assert not (tmp_path / children.SOCKET_NAME).exists()


def test_hand_over_without_a_supervisor_does_nothing(tmp_path: Path) -> None:
    code = (
        f"import sys, os\nsys.path.insert(0, {SRC!r})\n"
        "from pysandboxes.learn.children import hand_over\n"
        f"hand_over({str(tmp_path)!r})\n"
        "open(os.devnull).close()\n"
        "print(open('/proc/self/status').read().count('Seccomp:\\t0'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"  # no filter was installed


def test_resolve_against_cwd_and_directory_descriptor(tmp_path: Path) -> None:
    pid = os.getpid()
    assert children.resolve(pid, None, "/a/../b") == "/b"
    assert children.resolve(pid, -100, "x/y") == os.path.join(os.getcwd(), "x/y")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert children.resolve(pid, fd, "z") == str(tmp_path / "z")
        assert children.resolve(pid, fd, "") == str(tmp_path)
    finally:
        os.close(fd)
    read, write = os.pipe()
    try:
        assert children.resolve(pid, read, "z") is None  # a pipe is no directory
    finally:
        os.close(read)
        os.close(write)


def test_read_string_from_process_memory() -> None:
    buffer = ctypes.create_string_buffer(b"/some/path\0rest")
    assert children.read_string(os.getpid(), ctypes.addressof(buffer)) == "/some/path"
    assert children.read_string(os.getpid(), 0) is None


def test_open_flags_decide_read_or_write() -> None:
    operation = ChildObserver._operation
    assert operation("open", os.O_RDONLY) == "read"
    assert operation("open", os.O_WRONLY) == "write"
    assert operation("open", os.O_RDWR) == "write"
    assert operation("open", os.O_RDONLY | os.O_CREAT) == "write"
    assert operation("open", os.O_RDONLY | os.O_TRUNC) == "write"
    assert operation("open", os.O_PATH) == "none"
    assert operation("exec", 0) == "exec"


def test_refusal_texts_name_the_cause() -> None:
    assert "no seccomp" in children.refusal_text(OSError(errno.ENOSYS, "x"))
    assert "user-notification" in children.refusal_text(OSError(errno.EINVAL, "x"))
    assert "container" in children.refusal_text(OSError(errno.EACCES, "x"))
    assert "already" in children.refusal_text(OSError(errno.EBUSY, "x"))


def test_script_interpreter_is_read_from_the_shebang(tmp_path: Path) -> None:
    script = tmp_path / "s"
    script.write_text("#!/usr/bin/env  sh -e\necho\n")
    assert children.script_interpreter(str(script)) == "/usr/bin/env"
    script.write_text("#!relative\n")
    assert children.script_interpreter(str(script)) is None
    script.write_bytes(b"\x7fELF")
    assert children.script_interpreter(str(script)) is None
    assert children.script_interpreter(str(tmp_path / "missing")) is None
