"""``guard/paths.py``'s ``resolve``: the kernel's answer for a deep path's directory part
(``kernel_resolve``: a hidden ``open(O_PATH)`` and ``/proc/self/fd/N``) is the walk's, one
``lstat`` per component, in every case: links in the middle, ``..`` after a link, loops,
missing or unsearchable components, names too long, trailing ``/``, ``.`` and ``..``.

The walk (``kernel=False``) is the reference: it is the resolution the file rules were always
judged by. Where the path exists, both must also be ``os.path.realpath``'s answer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pysandboxes.guard.kit import capture
from pysandboxes.guard.paths import KERNEL_MIN_DEPTH, KERNEL_MIN_DEPTH_COMPILED, make_path_tools
from pysandboxes.platform_caps import CAPS
from tests.unit.guard.harness import run_armed

linux_proc = pytest.mark.skipif(
    CAPS.fd_path != "proc" or not hasattr(os, "O_PATH"),
    reason="the kernel resolution needs Linux's O_PATH and /proc/self/fd",
)

_OPENS: list[tuple[object, int]] = []
_RECORDING: list[bool] = [False]


def _record_open(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _RECORDING[0] and type(args[0]) is bytes:
        _OPENS.append((args[0], args[2]))  # type: ignore[arg-type]


sys.addaudithook(_record_open)  # records only while a test asks (hooks cannot be removed)


def _tools(kernel: bool) -> object:
    return make_path_tools(capture(), os.path.dirname(os.__file__), kernel=kernel)


def _deep(root: Path) -> Path:
    """A directory at least ``KERNEL_MIN_DEPTH`` components deep below ``root``."""

    deep = root
    while str(deep).count("/") < KERNEL_MIN_DEPTH + 1:
        deep = deep / "d"
    deep.mkdir(parents=True, exist_ok=True)
    return deep


def _tree(root: Path) -> dict[str, str]:
    """Paths (absolute or relative to ``root``) covering what resolution must get right."""

    deep = _deep(root / "tree")
    (deep / "sub" / "leaf").mkdir(parents=True)
    (deep / "sub" / "leaf" / "file").write_text("x\n")
    (deep / "file").write_text("y\n")
    (deep / "rel").symlink_to("sub/leaf")  # relative link in the middle
    (deep / "abs").symlink_to(deep / "sub" / "leaf")  # absolute link
    (deep / "up").symlink_to("sub/leaf/..")  # a link whose target ends in ..
    (deep / "loop1").symlink_to("loop2")
    (deep / "loop2").symlink_to("loop1")
    (deep / "self").symlink_to("self")
    (deep / "dangling").symlink_to("nowhere/at/all")
    (deep / "tofile").symlink_to("file")
    (deep / "chain").symlink_to("rel")
    (deep / "sub" / "leaf" / "back").symlink_to(deep / "up")
    (deep / "é").mkdir()
    os.mkdir(os.fsencode(deep) + b"/\xff")  # not UTF-8: "\udcff" as text
    (deep / "tobad").symlink_to("\udcff")  # a link whose target is not UTF-8
    (deep / "toroot").symlink_to("/")
    for number in range(41):  # one link more than a path may go through
        (deep / f"l{number}").symlink_to(f"l{number + 1}" if number < 40 else "sub")
    d = str(deep)
    return {
        "plain": f"{d}/sub/leaf/file",
        "plain dir": f"{d}/sub/leaf",
        "relative link": f"{d}/rel/file",
        "absolute link": f"{d}/abs/file",
        "chain of links": f"{d}/chain/file",
        "link to a link": f"{d}/sub/leaf/back/leaf/file",
        ".. after a link": f"{d}/rel/../file",
        ".. after a link, twice": f"{d}/abs/../../file",
        "link ending in ..": f"{d}/up/file",
        "loop in the middle": f"{d}/loop1/file",
        "loop at the end": f"{d}/loop1",
        "self loop": f"{d}/self/x/y",
        "missing middle": f"{d}/missing/sub/file",
        "missing middle, then ..": f"{d}/missing/../file",
        "missing final": f"{d}/sub/leaf/new",
        "dangling final link": f"{d}/dangling",
        "through a dangling link": f"{d}/dangling/x",
        "final link to a file": f"{d}/tofile",
        "file in the middle": f"{d}/file/x",
        "file in the middle, then ..": f"{d}/file/../sub",
        "trailing slash": f"{d}/sub/leaf/",
        "trailing slash on a file": f"{d}/file/",
        "trailing .": f"{d}/rel/.",
        "trailing ..": f"{d}/rel/..",
        "doubled slashes": f"{d}//sub///leaf//file",
        "dots": f"{d}/./sub/./leaf/./file",
        "above the root": "/../../.." + d + "/file",
        "a name too long": f"{d}/" + "n" * 300 + "/file",
        "a path too long": f"{d}/" + "/".join(["sub/leaf/.."] * 400) + "/file",
        "nul byte": f"{d}/sub\0x/file",
        "a name not ASCII": f"{d}/é/x",
        "a name not UTF-8": f"{d}/\udcff/x",
        "escapes whose bytes are UTF-8": f"{d}/\udcc3\udca9/x",
        "a link to a name not UTF-8": f"{d}/tobad/x",
        "a link to the root": f"{d}/toroot/tmp/../etc",
        "40 links": f"{d}/l1/leaf/file",
        "41 links": f"{d}/l0/leaf/file",
        "relative": "tree/" + os.path.relpath(d, root / "tree") + "/rel/file",
    }


def _both(tools_kernel: object, tools_walk: object, path: str, base: str | None) -> None:
    kernel = tools_kernel.resolve(path, base)  # type: ignore[attr-defined]
    walk = tools_walk.resolve(path, base)  # type: ignore[attr-defined]
    assert kernel == walk, (path, kernel, walk)


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[dict[str, str]]:
    yield _tree(tmp_path)


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@linux_proc
def test_the_kernel_and_the_walk_agree(tmp_path: Path, tree: dict[str, str]) -> None:
    kernel, walk = _tools(True), _tools(False)
    base = str(tmp_path)
    before = _open_fds()
    for name, path in tree.items():
        _both(kernel, walk, path, base)
        absolute = path if path.startswith("/") else base + "/" + path
        if "\0" not in path and os.path.exists(absolute):
            real = os.path.realpath(absolute)
            resolved = kernel.resolve(path, base)  # type: ignore[attr-defined]
            assert resolved == real.rstrip("/") or real == "/", (name, resolved, real)
    assert _open_fds() == before  # the descriptor is closed on every way out


_COMPILED = (
    "import json, os, sys\n"
    "from pysandboxes.guard import accelerator\n"
    "from pysandboxes.guard.kit import capture\n"
    "from pysandboxes.guard.paths import make_path_tools\n"
    "if os.getuid() == 0 and sys.argv[2] == 'nobody':\n"
    "    os.setgid(65534); os.setuid(65534)\n"
    "flags = sys.argv[3].split(',')\n"
    "if 'seccomp' in flags:  # python-sb's own filter: openat2 fails with ENOSYS\n"
    "    from pysandboxes.providers import seccomp\n"
    "    seccomp.install()\n"
    "kit = capture()\n"
    "a = accelerator.take('require', kit)\n"
    "c = make_path_tools(\n"
    "    kit, os.path.dirname(os.__file__), kernel=True, dir_path=a.dir_path,\n"
    "    compiled_walk=a.path_walk,\n"
    ")\n"
    "w = make_path_tools(kit, os.path.dirname(os.__file__), kernel=False)\n"
    "opens = []\n"
    "sys.addaudithook(lambda e, a: opens.append(a[0]) if e == 'open' else None)\n"
    "before = sorted(os.listdir('/proc/self/fd'))\n"
    "paths, base = json.loads(sys.argv[1])\n"
    "if 'compiled' in flags:  # the compiled walk's system calls alone\n"
    "    out = [(c.resolve(p, base), None) for p in paths]\n"
    "else:\n"
    "    out = [(c.resolve(p, base), w.resolve(p, base)) for p in paths]\n"
    "n = len(opens)\n"
    "print(json.dumps([out, before == sorted(os.listdir('/proc/self/fd')), n]))\n"
)


def _compiled_and_walk(
    paths: list[str],
    base: str | None,
    user: str = "",
    filtered: bool = False,
    trace: str = "",
    alone: bool = False,
) -> list[object]:
    """``[(compiled walk's answer, Python walk's answer) per path, no descriptor left open,
    number of open events]`` from a fresh interpreter (the accelerator is handed out once a
    process); ``filtered``: under python-sb's seccomp filter (``openat2`` refused);
    ``trace``: run under ``strace -f -o TRACE`` (its system calls, for the caller to read);
    ``alone``: the compiled walk only (its answers, the Python walk's ``None``)."""

    strace = ["strace", "-f", "-qq", "-o", trace] if trace else []
    flags = ",".join(flag for flag, on in (("seccomp", filtered), ("compiled", alone)) if on)
    done = subprocess.run(
        [*strace, sys.executable, "-c", _COMPILED, json.dumps([paths, base]), user, flags],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_compiled_walk_and_the_python_walk_agree(tmp_path: Path, tree: dict[str, str]) -> None:
    """The compiled accelerator (guard/accelerator.py): its ``path_walk`` in place of the
    Python walk, its ``dir_path`` in place of the hidden ``open`` from
    ``KERNEL_MIN_DEPTH_COMPILED`` components: the Python walk's answer on every case of the
    tree, shallow, deep and deeper than that, absolute and below a base, with no descriptor
    left open and no ``open`` event raised."""

    from tests.helpers import require
    from tests.unit.guard.test_accelerator import BUILT

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    deeper = Path(tree["plain"]).parent
    for _ in range(KERNEL_MIN_DEPTH_COMPILED + 2):
        deeper = deeper / "n"
    deeper.mkdir(parents=True)
    (deeper / "up").symlink_to("../../x")  # a link far below the kernel's threshold
    (deeper / "self").symlink_to("self")
    shallow = [
        f"{deeper}/file",
        f"{deeper}/up/../y",
        f"{deeper}/self/z",
        f"{deeper}/../../../../é",
        "/tmp",
        "/usr/lib",
        "/proc/self/cwd",
        "/etc/passwd",
        "/nonexistent/x/y/z",
        str(tmp_path) + "/tree",
        str(tmp_path) + "/tree/d/../d/./d",
    ]
    pairs, closed, opens = _compiled_and_walk([*tree.values(), *shallow], str(tmp_path))
    assert closed
    assert opens == 0
    for path, (compiled, walk) in zip([*tree.values(), *shallow], pairs, strict=True):
        assert compiled == walk, (path, compiled, walk)
    deep = os.path.dirname(os.path.dirname(os.path.dirname(tree["plain"])))
    relative = [p[len(deep) + 1 :] for p in tree.values() if p.startswith(deep + "/")]
    assert len(relative) >= 30
    for base in (deep, deep + "/./", "/"):  # a base walked below, one joined and walked again
        pairs, closed, opens = _compiled_and_walk(relative, base)
        assert closed and opens == 0
        for path, (compiled, walk) in zip(relative, pairs, strict=True):
            assert compiled == walk, (base, path, compiled, walk)


def _calls_naming(trace: Path, text: str) -> list[str]:
    """The names of the system calls in an strace log (``-o``) whose first quoted argument
    (the path of ``openat2``, ``newfstatat``, ``lstat``...) starts with ``text``."""

    calls = []
    for line in trace.read_text().splitlines():
        found = re.match(r"\d+\s+(\w+)\([^\"]*\"([^\"]*)\"", line)
        if found and found.group(2).startswith(text):
            calls.append(found.group(1))
    return calls


def test_a_path_without_links_costs_two_system_calls(tmp_path: Path, tree: dict[str, str]) -> None:
    """The compiled walk asks the kernel first whether a path of three components or more has
    a symbolic link on its way (``openat2`` with ``RESOLVE_NO_SYMLINKS``, closed at once): when
    none, the answer is the lexical one, without one ``lstat`` per component; when its final
    name alone is missing, its directory is asked the same (``mkdir``'s case); a link on the
    way, and the walk looks every component up as before. The answers are checked against the
    Python walk by the test above; this one counts the system calls."""

    from tests.helpers import require, require_tool
    from tests.unit.guard.test_accelerator import BUILT

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    require_tool("strace")
    deep = os.path.dirname(os.path.dirname(os.path.dirname(tree["plain"])))
    deeper = Path(tree["plain"]).parent
    for _ in range(KERNEL_MIN_DEPTH_COMPILED):
        deeper = deeper / "n"
    deeper.mkdir(parents=True)
    cases = {
        "plain": (["openat2"], tree["plain"]),
        "missing final": (["openat2", "openat2"], tree["missing final"]),
        "deeper than the kernel's threshold": (["openat2"], str(deeper)),  # no dir_path open
    }
    for name, (expected, path) in cases.items():
        trace = tmp_path / f"{name}.trace"
        pairs, closed, _ = _compiled_and_walk([path], None, trace=str(trace), alone=True)
        assert closed and pairs == [[path, None]], (name, pairs)
        assert _calls_naming(trace, deep) == expected, (name, trace.read_text()[-2000:])
    trace = tmp_path / "link.trace"
    pairs, closed, _ = _compiled_and_walk(
        [tree["relative link"]], None, trace=str(trace), alone=True
    )
    assert closed and pairs == [[os.path.realpath(tree["relative link"]), None]]
    calls = _calls_naming(trace, deep)
    assert calls[0] == "openat2" and calls.count("openat2") == 1, calls  # refused: a link
    assert calls.count("newfstatat") + calls.count("lstat") >= 3, calls  # then the walk
    trace = tmp_path / "deep-link.trace"
    linked = deep + "/sub/.." * 6 + "/rel/file"  # deep, and a link on the way
    pairs, closed, _ = _compiled_and_walk([linked], None, trace=str(trace), alone=True)
    assert closed and pairs == [[os.path.realpath(linked), None]]
    calls = _calls_naming(trace, deep)
    assert calls[:2] in (["openat2", "open"], ["openat2", "openat"]), calls  # then dir_path


def test_without_openat2_the_compiled_walk_walks(tmp_path: Path, tree: dict[str, str]) -> None:
    """Under python-sb's own seccomp filter (the ``landlock`` and ``bwrap`` providers), where
    ``openat2`` fails with ``ENOSYS``: the compiled walk tries it once in the process, then
    looks every component up, with the Python walk's answers on every case of the tree."""

    from tests.helpers import require, require_tool
    from tests.unit.guard.test_accelerator import BUILT

    require(BUILT, "the compiled accelerator is not built for this interpreter")
    require_tool("strace")
    paths = [p for p in tree.values() if p.startswith("/")]
    trace = tmp_path / "filtered.trace"
    pairs, closed, opens = _compiled_and_walk(paths, str(tmp_path), filtered=True, trace=str(trace))
    assert closed and opens == 0
    for path, (compiled, walk) in zip(paths, pairs, strict=True):
        assert compiled == walk, (path, compiled, walk)
    attempts = [line for line in trace.read_text().splitlines() if " openat2(" in line]
    assert len(attempts) == 1 and "ENOSYS" in attempts[0], attempts


def test_a_relative_path_is_walked_below_its_base(tree: dict[str, str]) -> None:
    """A relative path with a base (a ``dir_fd``'s directory, the working directory) is
    walked from the base, which is the kernel's own name of a directory: the same answer as
    the walk of the whole path, for every case of the tree written relative to the deep
    directory (links, ``..`` above the base, missing and dangling names), and for a base
    written unusually (walked again)."""

    walk = _tools(False)
    deep = os.path.dirname(os.path.dirname(os.path.dirname(tree["plain"])))
    checked = 0
    for name, path in tree.items():
        if not path.startswith(deep + "/") or "\0" in path:
            continue
        relative = path[len(deep) + 1 :]
        if relative.startswith("/") or relative.count("/") >= KERNEL_MIN_DEPTH:
            continue  # absolute (doubled slashes); the kernel's case, checked above
        whole = walk.resolve(deep + "/" + relative, None)  # type: ignore[attr-defined]
        for base in (deep, deep + "/", deep + "/./", deep + "/sub/.."):
            below = walk.resolve(relative, base)  # type: ignore[attr-defined]
            assert below == whole, (name, base, below, whole)
        checked += 1
    assert checked >= 20
    assert walk.resolve("x", "/") == "/x"  # type: ignore[attr-defined]
    assert walk.resolve("..", "/") == "/"  # type: ignore[attr-defined]


@linux_proc
def test_deep_paths_are_resolved_by_the_kernel(tree: dict[str, str]) -> None:
    """The kernel answers (one O_PATH open of the directory part) for a deep path; the walk
    alone answers for a shallow one and when asked to (``kernel=False``)."""

    kernel, walk = _tools(True), _tools(False)
    _OPENS.clear()
    _RECORDING[0] = True
    try:
        kernel.resolve(tree["relative link"], None)  # type: ignore[attr-defined]
        kernel.resolve("/usr/lib", None)  # type: ignore[attr-defined]
        walk.resolve(tree["plain"], None)  # type: ignore[attr-defined]
    finally:
        _RECORDING[0] = False
    directory = os.fsencode(os.path.dirname(tree["relative link"]))
    expected = [(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)]
    assert expected == _OPENS


@linux_proc
def test_a_directory_that_cannot_be_searched() -> None:
    """A component the process may not search: the kernel refuses the open, the walk keeps
    what it cannot look up as written -- both answers agree. Run as an unprivileged user
    (root searches everything)."""

    root = Path(tempfile.mkdtemp(prefix="pysb-paths-"))
    try:
        root.chmod(0o755)
        deep = _deep(root / "t")
        for parent in [deep, *deep.parents]:
            if parent == root:
                break
            parent.chmod(0o755)
        (deep / "closed" / "inner").mkdir(parents=True)
        (deep / "closed" / "inner" / "file").write_text("x\n")
        (deep / "link").symlink_to("closed/inner")
        (deep / "closed").chmod(0o600)  # readable, not searchable
        paths = [
            f"{deep}/closed/inner/file",
            f"{deep}/closed/inner/../../closed",
            f"{deep}/link/file",
            f"{deep}/closed/../closed/inner",
            f"{deep}/closed",
        ]
        code = (
            "import json, os, sys\n"
            "from pysandboxes.guard.kit import capture\n"
            "from pysandboxes.guard.paths import make_path_tools\n"
            "if os.getuid() == 0:\n"
            "    os.setgid(65534); os.setuid(65534)\n"
            "kit = capture()\n"
            "k = make_path_tools(kit, os.path.dirname(os.__file__), kernel=True)\n"
            "w = make_path_tools(kit, os.path.dirname(os.__file__), kernel=False)\n"
            "before = sorted(os.listdir('/proc/self/fd'))\n"
            "out = [(k.resolve(p, None), w.resolve(p, None)) for p in json.loads(sys.argv[1])]\n"
            "print(json.dumps([out, before == sorted(os.listdir('/proc/self/fd'))]))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, json.dumps(paths)],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        pairs, closed = json.loads(done.stdout)
        assert closed
        for path, (kernel, walk) in zip(paths, pairs, strict=True):
            assert kernel == walk, (path, kernel, walk)
        from tests.unit.guard.test_accelerator import BUILT

        if BUILT:  # the compiled kernel resolution (its own test says when it is missing)
            pairs, closed, _ = _compiled_and_walk(paths, None, "nobody")
            assert closed
            for path, (compiled, walk) in zip(paths, pairs, strict=True):
                assert compiled == walk, (path, compiled, walk)
    finally:
        (deep / "closed").chmod(0o755)
        subprocess.run(["rm", "-rf", str(root)], check=False)


@linux_proc
def test_without_proc_the_walk_resolves(tree: dict[str, str]) -> None:
    """No ``/proc/self/fd`` here (``fd_query=""``: the platform cannot name a descriptor):
    the walk answers, the same."""

    tools = make_path_tools(capture(), os.path.dirname(os.__file__), fd_query="")
    walk = _tools(False)
    for path in tree.values():
        _both(tools, walk, path, None)


def test_the_kernel_answer_reaches_the_rules(tmp_path: Path) -> None:
    """Through the armed guard: a file exposed alone, deep in directories no rule exposes, is
    read (the resolver's own open of its directory is not judged as the program's, and
    leaves no --denials line); its unexposed neighbour and a link through a loop are refused
    with the file rules' error; ``..`` after a link lands where the kernel goes."""

    project = tmp_path / "project"
    project.mkdir()
    deep = _deep(tmp_path / "hidden")
    (deep / "alone").write_text("alone\n")
    (deep / "other").write_text("other\n")
    (deep / "sub").mkdir()
    (deep / "loop").symlink_to("loop")
    (project / "link").symlink_to(deep / "sub")
    denials = tmp_path / "denials.jsonl"
    code = f"""
print(open({str(deep / "alone")!r}).read().strip())
for path in ({str(deep / "other")!r}, {str(deep / "loop" / "x")!r}, "link/../other"):
    try:
        open(path)
    except OSError as exc:
        print(type(exc).__name__)
"""
    rules = f"expose-ro=.\nexpose-ro={deep / 'alone'}\npython-import=*\n"
    result = run_armed(code, rules, project, denials_file=denials)
    assert result.returncode == 0, result.stderr
    assert result.lines == [
        "alone",
        "RulePermissionError",
        "RulePermissionError",
        "RulePermissionError",
    ], result.stdout
    logged = denials.read_text().splitlines()
    assert len(logged) == 3, logged  # the three refused opens, nothing for the directory
    assert all(str(deep / "other") in line or str(deep / "loop") in line for line in logged)


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("/", True),
        ("/usr/lib", True),
        ("/root/.pyenv/x", True),  # a name beginning with a dot is a name
        ("/w/.venv/lib/a.py", True),
        ("/a/..b", True),
        ("/a/b.", True),
        ("/a/", True),  # a final "/" adds no component
        ("/a//b", False),
        ("//a", False),
        ("/a/./b", False),
        ("/a/.", False),
        ("/a/../b", False),
        ("/a/..", False),
        ("/usr/lib/../../etc/shadow", False),
    ],
)
def test_names_plainly(text: str, plain: bool) -> None:
    """The one test behind the trusted-read shortcut and the walk below a resolved base: an
    empty, ``.`` or ``..`` component after the first character makes the text not plain."""

    from pysandboxes.guard.paths import names_plainly

    assert names_plainly(text) is plain


def test_a_name_is_judged_as_the_kernel_gets_it(tmp_path: Path) -> None:
    """Text that encodes to the same bytes as another (``"\\udcc3\\udca9"``, two escaped
    bytes, and ``"é"``) is one name to the kernel: ``text_of`` and ``resolve`` give the one
    text the bytes decode to, for ``str``, its subclasses and ``bytes``, shallow and deep,
    walked, below a base or resolved by the kernel; text that does not encode at all (a lone
    surrogate outside the escapes) is kept, and ASCII is returned as it is."""

    (tmp_path / "é").mkdir()
    escaped = "\udcc3\udca9"

    class Text(str):
        pass

    for kernel in (False, True):
        tools = _tools(kernel)
        assert tools.text_of(escaped) == "é"  # type: ignore[attr-defined]
        assert tools.text_of(Text("x/" + escaped)) == "x/é"  # type: ignore[attr-defined]
        assert tools.text_of(os.fsencode("é")) == "é"  # type: ignore[attr-defined]
        assert tools.text_of("\ud800") == "\ud800"  # type: ignore[attr-defined]
        plain = "/usr/lib"
        assert tools.text_of(plain) is plain  # type: ignore[attr-defined]
        for written in (f"{tmp_path}/{escaped}/x", f"{_deep(tmp_path)}/../{escaped}/x"):
            found = tools.resolve(written, None)  # type: ignore[attr-defined]
            assert found.endswith("/é/x") and escaped not in found, (kernel, written, found)
        assert tools.resolve(escaped, str(tmp_path)) == f"{tmp_path}/é"  # type: ignore[attr-defined]
        assert tools.resolve("x", f"{tmp_path}/{escaped}") == f"{tmp_path}/é/x"  # type: ignore[attr-defined]
