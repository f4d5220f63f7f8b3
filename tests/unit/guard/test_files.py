"""Files (SPEC §3.1) through an armed interpreter: resolution, ignore=, defaults, protection."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from tests.unit.guard.harness import run_armed


def _world(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    (project / "w" / "d").mkdir(parents=True)
    (project / "w" / "d" / "f").write_text("inside\n")
    (project / ".env").write_text("TOKEN=x\n")
    (project / "key.pem").write_text("k\n")
    (project / "ok.txt").write_text("ok\n")
    outside = tmp_path / "outside"
    (outside / "d").mkdir(parents=True)
    (outside / "d" / "f").write_text("outside\n")
    return project, outside


def test_ignore_hides_from_stat_and_listings(tmp_path: Path) -> None:
    project, _ = _world(tmp_path)
    code = """
import os, glob, pathlib
print("listdir", sorted(os.listdir(".")))
print("scandir", sorted(e.name for e in os.scandir(".")))
print("walk", sorted(next(os.walk("."))[2]))
print("glob", sorted(glob.glob("*")))
print("iterdir", sorted(p.name for p in pathlib.Path(".").iterdir()))
print("exists", os.path.exists(".env"), os.path.exists("key.pem"), os.path.exists("ok.txt"))
print("access", os.access(".env", os.R_OK))
try:
    os.stat(".env")
except FileNotFoundError as exc:
    print("stat", exc.errno)
try:
    open("key.pem")
except FileNotFoundError as exc:
    print("open", exc.errno, type(exc).__name__)
"""
    result = run_armed(code, "expose-ro=.\nignore=.env\nignore=*.pem\npython-import=*\n", project)
    assert result.returncode == 0, result.stderr
    visible = "['ok.txt', 'prog.py', 'w']" if (project / "prog.py").exists() else "['ok.txt', 'w']"
    out = dict(line.split(" ", 1) for line in result.lines)
    for key in ("listdir", "scandir", "glob", "iterdir"):
        assert out[key] == visible, (key, out[key])
    assert out["walk"] == "['ok.txt']"
    assert out["exists"] == "False False True"
    assert out["access"] == "False"
    assert out["stat"] == str(errno.ENOENT)
    assert out["open"] == f"{errno.ENOENT} RuleFileNotFoundError"


def test_ignore_hides_a_link_by_its_own_name(tmp_path: Path) -> None:
    """Issue 24, item 7: one meaning of ignore= -- a name is hidden whatever it is, so a
    symbolic link whose own name matches is absent (as in listings and under bwrap/unshare),
    even though its target's name does not; the target stays readable by its own name."""

    project, _ = _world(tmp_path)
    (project / ".env").unlink()
    (project / ".env").symlink_to("ok.txt")
    code = """
import os
out = []
for action in (lambda: open(".env").read(), lambda: os.stat(".env"),
               lambda: os.stat("./.env"), lambda: open("w/../.env").read()):
    try:
        action()
        out.append("seen")
    except FileNotFoundError:
        out.append("absent")
print(" ".join(out), ".env" in os.listdir("."), open("ok.txt").read().strip())
"""
    result = run_armed(code, "expose-ro=.\nignore=.env\npython-import=*\n", project)
    assert result.returncode == 0, result.stderr
    assert result.lines[-1] == "absent absent absent absent False ok"


def test_symlink_swap_after_a_cached_decision(tmp_path: Path) -> None:
    """The decision cache is dropped when the program changes the tree (rename, symlink)."""

    project, _outside = _world(tmp_path)
    (project / "ro").mkdir()
    (project / "ro" / "f").write_text("read-only\n")
    code = f"""
import os
open("w/d/f", "a").write("more")
print("first", "written")
os.rename("w/d", "w/old")
os.symlink({str(project / "ro")!r}, "w/d")
try:
    open("w/d/f", "a").write("more")
    print("second written")
except PermissionError as exc:
    print("second refused", type(exc).__name__)
"""
    result = run_armed(code, "expose-rw=./w\nexpose-ro=.\npython-import=os\n", project)
    assert "first written" in result.lines
    assert "second refused RulePermissionError" in result.lines, result.stdout + result.stderr


def test_defaults_and_protected_files(tmp_path: Path) -> None:
    project, _ = _world(tmp_path)
    tmpdir = tmp_path / "private-tmp"
    tmpdir.mkdir()
    denials = tmp_path / "denials.jsonl"
    (project / ".py-sandboxes").write_text("expose-rw=.\n")
    code = f"""
import os, sys, json
open({str(tmpdir / "t")!r}, "w").write("tmp")
print("tmp", open({str(tmpdir / "t")!r}).read())
open("/dev/null", "w").write("x")
print("urandom", len(open("/dev/urandom", "rb").read(4)))
print("stdlib", len(open(os.__file__).read()) > 0)
for path in (os.__file__, ".py-sandboxes", {str(denials)!r}):
    try:
        open(path, "a")
        print("WROTE", path)
    except PermissionError as exc:
        print("refused", os.path.basename(path), exc.errno)
for action in (lambda: os.rename(".py-sandboxes", "x"), lambda: os.remove(".py-sandboxes")):
    try:
        action()
    except PermissionError:
        print("protected")
print("rule file readable", open(".py-sandboxes").read().strip())
"""
    result = run_armed(
        code,
        "expose-rw=.\npython-import=os,sys,json\n",
        project,
        tmpdir=tmpdir,
        denials_file=denials,
    )
    assert result.returncode == 0, result.stderr
    lines = result.lines
    assert "tmp tmp" in lines and "urandom 4" in lines and "stdlib True" in lines
    assert not [line for line in lines if line.startswith("WROTE")]
    assert lines.count("protected") == 2
    assert "rule file readable expose-rw=." in lines
    assert sum(line.startswith("refused") for line in lines) == 3
    logged = denials.read_text().splitlines()
    assert len(logged) == 5  # three opens, one rename, one remove


def test_refusal_shape(tmp_path: Path) -> None:
    project, outside = _world(tmp_path)
    secret = outside / "d" / "f"
    code = f"""
import errno, pysandboxes
try:
    open({str(secret)!r})
except PermissionError as exc:
    assert isinstance(exc, pysandboxes.SandBoxError) and isinstance(exc, OSError)
    print("errno", exc.errno == errno.EACCES)
    print("filename", exc.filename)
    print("message", exc)
    print("denial", pysandboxes.sandbox_denials(exc)[0])
try:
    open(12.5)
except TypeError:
    print("TypeError kept")
import pathlib
text = pathlib.Path("ok.txt").read_text().strip()
print("pathlib", text, open(pathlib.PurePath("ok.txt")).read().strip())
print("bytes", open(b"ok.txt").read().strip())
"""
    result = run_armed(code, "expose-ro=.\npython-import=*\n", project)
    out = dict(line.split(" ", 1) for line in result.lines)
    assert out["errno"] == "True"
    assert out["filename"] == str(secret)
    assert out["message"] == (
        f"Read access to '{secret}' DENIED: no expose-ro/expose-rw rule covers it "
        f"(add 'expose-ro={secret}')"
    )
    assert "kind='file'" in out["denial"] and "suggestion='expose-ro=" in out["denial"]
    assert out["pathlib"] == "ok ok"
    assert out["bytes"] == "ok"
    assert "TypeError kept" in result.lines


def test_write_to_read_only_names_the_rule(tmp_path: Path) -> None:
    project, _ = _world(tmp_path)
    code = """
try:
    open("ok.txt", "w")
except PermissionError as exc:
    print(exc)
"""
    result = run_armed(code, "expose-ro=.\n", project)
    rule_file = project / ".py-sandboxes"
    assert result.lines == [
        "Write access to 'ok.txt' DENIED: rule 'expose-ro=.' from .py-sandboxes(1) grants read "
        f"access only (add 'expose-rw={os.path.realpath(project / 'ok.txt')}')"
    ], rule_file


def test_no_guard_frame_reaches_code_run_during_the_hook(tmp_path: Path) -> None:
    """A ``__del__`` run by the garbage collector while the hook runs cannot see its frames."""

    code = """
import gc, sys, os
found = []
class Probe:
    def __init__(self):
        self.cycle = self
    def __del__(self):
        try:
            frame = sys._getframe(1)
            while frame is not None:
                if str(frame.f_globals.get("__name__", "")).startswith("pysandboxes.guard"):
                    found.append(sorted(frame.f_locals))
                frame = frame.f_back
        except PermissionError:
            found.append("refused")
gc.set_threshold(1, 1, 1)
for _ in range(200):
    Probe()
    try:
        os.listdir("../nowhere")
    except OSError:
        pass
gc.set_threshold(700, 10, 10)
leaked = [f for f in found if f != "refused"]
print("leaked", leaked[:1])
print("refused seen", "refused" in found)
"""
    result = run_armed(code, "expose-ro=.\npython-import=*\n", tmp_path)
    assert "leaked []" in result.lines, result.stdout + result.stderr
    assert "refused seen True" in result.lines  # the collector did run inside the hook


def test_certificates_readable_private_keys_not(tmp_path: Path) -> None:
    code = """
import os
for path in ("/etc/ssl/certs", "/etc/ssl/private"):
    try:
        os.listdir(path)
        print(path, "listed")
    except PermissionError:
        print(path, "refused")
    except FileNotFoundError:
        print(path, "missing")
"""
    result = run_armed(code, "python-import=os\n", tmp_path)
    out = dict(line.rsplit(" ", 1) for line in result.lines)
    assert out["/etc/ssl/certs"] in ("listed", "missing")
    assert out["/etc/ssl/private"] in ("refused", "missing")
