"""tkinter's Tcl interpreter: the language works, the commands reaching the system are hidden
unless python-api=ALLOW:tkinter.Tcl (guard/tcl.py, issue 18 class 1)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

CODE = """
import tkinter
tcl = tkinter.Tcl()
print("expr", tcl.eval("expr {6 * 7}"))
tcl.eval("proc twice x {return [string repeat $x 2]}")
print("proc", tcl.call("twice", "ab"))
tcl.setvar("v", "value")
print("var", tcl.getvar("v"))
print("join", tcl.eval("file join a b"))
def attempt(script):
    try:
        print("ran", script.split()[0], tcl.eval(script)[:20].replace(" ", "_"))
    except tkinter.TclError as exc:
        print("refused", script.split()[0], "tkinter.Tcl" in str(exc))
for script in ("exec true", "open data.txt", "source data.txt", "glob *", "cd /",
               "file delete data.txt", "::tcl::file::delete data.txt",
               "interp invokehidden {} exec true", "load libc.so.6"):
    attempt(script)
"""


def test_tcl_language_works_and_system_commands_are_refused(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("data\n")
    result = run_armed(CODE, "expose-rw=.\npython-import=tkinter\n", tmp_path)
    lines = result.lines
    assert lines[:4] == ["expr 42", "proc abab", "var value", "join a/b"], result.stderr
    refused = [line for line in lines[4:] if line.startswith("refused")]
    assert len(refused) == 9 and all(line.endswith(" True") for line in refused), lines
    assert (tmp_path / "data.txt").exists()


def test_tcl_with_the_grant_is_whole(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("data\n")
    rules = "expose-rw=.\npython-import=tkinter\npython-api=ALLOW:tkinter.Tcl\n"
    result = run_armed(CODE, rules, tmp_path)
    assert "ran exec " in result.stdout, result.stdout + result.stderr
    assert "ran open file" in result.stdout, result.stdout
