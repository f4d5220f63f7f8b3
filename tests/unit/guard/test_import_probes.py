"""A refused import of a module the import system would not find is no denial (issue 11,
the PROBE_LOGGED replay case; docs/python-layer.md, *Probes*): the program gets CPython's
``ModuleNotFoundError`` and ``--denials`` stays quiet. A module that exists is refused as
before (``RuleModuleNotFoundError``, a denial). The search runs no code of the program's and
never looks into a directory the program may not read: it is no oracle."""

from __future__ import annotations

from pathlib import Path

from tests.unit.guard.harness import run_armed

TRY = """
import pysandboxes
def probe(name):
    try:
        __import__(name)
        print(name, "imported")
    except ImportError as exc:
        print(name, type(exc).__name__, len(pysandboxes.sandbox_denials(exc)))
"""


def test_a_probe_is_no_denial_a_real_refusal_is(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text("VALUE = 1\n")
    (tmp_path / "space").mkdir()  # a namespace package: found
    code = TRY + (
        f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
        "for name in ['winreg', 'no_such_module_here', 'socket', 'mine', 'space', 'gc']:\n"
        "    probe(name)\n"
    )
    denials = tmp_path / "denials.jsonl"
    rules = f"expose-ro={tmp_path}\npython-import=gc\n"
    result = run_armed(code, rules, tmp_path, denials_file=denials)
    assert result.lines == [
        "winreg ModuleNotFoundError 0",
        "no_such_module_here ModuleNotFoundError 0",
        "socket RuleModuleNotFoundError 1",
        "mine RuleModuleNotFoundError 1",
        "space RuleModuleNotFoundError 1",
        "gc imported",
    ], result
    logged = denials.read_text()
    assert [line.split('"target": "')[1].split('"')[0] for line in logged.splitlines()] == [
        "socket",
        "mine",
        "space",
    ]


def test_an_unreadable_directory_is_not_searched(tmp_path: Path) -> None:
    """The attack: put a directory the program may not read on ``sys.path`` and tell from the
    refusal whether a module is there. Both names give the same answer; the control (no
    sandbox) shows that one of them exists."""

    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "present.py").write_text("")
    project = tmp_path / "project"
    project.mkdir()
    code = TRY + (
        f"import sys\nsys.path.insert(0, {str(secret)!r})\nprobe('present')\nprobe('absent')\n"
    )
    denials = tmp_path / "denials.jsonl"
    result = run_armed(code, f"expose-ro={project}\n", project, denials_file=denials)
    assert result.lines == [
        "present ModuleNotFoundError 0",
        "absent ModuleNotFoundError 0",
    ], result
    assert not denials.exists()
    # Control: readable, the module is found (so refused as a denial).
    readable = run_armed(code, f"expose-ro={project}\nexpose-ro={secret}\n", project)
    assert readable.lines == [
        "present RuleModuleNotFoundError 1",
        "absent ModuleNotFoundError 0",
    ], readable


def test_code_of_the_program_is_never_run_by_the_search(tmp_path: Path) -> None:
    """A finder of the program's, or a ``sys.path`` entry of a ``str`` subclass: the guard
    will not ask them, so the module counts as found (a denial) and their code never runs."""

    code = TRY + (
        "import sys\n"
        "calls = []\n"
        "class Finder:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        calls.append(name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Finder())\n"
        "probe('winreg')\n"
        "sys.meta_path.pop(0)\n"
        "class Entry(str):\n"
        "    def __eq__(self, other):\n"
        "        calls.append('eq')\n"
        "        return str.__eq__(self, other)\n"
        "    __hash__ = str.__hash__\n"
        "    def startswith(self, *args):\n"
        "        calls.append('startswith')\n"
        "        return str.startswith(self, *args)\n"
        "sys.path.insert(0, Entry('/nowhere'))\n"
        "probe('winreg')\n"
        "print('calls', calls)\n"
    )
    result = run_armed(code, f"expose-ro={tmp_path}\n", tmp_path)
    # The import system never reaches the finder either: the guard refuses before the search.
    assert result.lines == [
        "winreg RuleModuleNotFoundError 1",
        "winreg RuleModuleNotFoundError 1",
        "calls []",
    ], result


def test_learning_still_records_only_what_loaded(tmp_path: Path) -> None:
    code = TRY + "probe('winreg')\nprobe('json')\n"
    result = run_armed(code, "", tmp_path, mode="learn")
    assert result.lines == ["winreg ModuleNotFoundError 0", "json imported"], result
    names = [r["name"] for r in result.records if r.get("kind") == "import"]
    assert "json" in names and "winreg" not in names
