"""SPEC §2.7: where the rule file is found."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pysandboxes.policy.locate import find_rule_file, module_directories


def test_explicit_file_wins(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("")
    assert find_rule_file("ci.rules", "script", "x.py", str(tmp_path)) == str(tmp_path / "ci.rules")
    assert find_rule_file("/a/b", "repl", None, str(tmp_path)) == "/a/b"


def test_script_run_from_another_directory(tmp_path: Path) -> None:
    scripts = tmp_path / "my-skill" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "report.py").write_text("")
    (scripts / ".py-sandboxes").write_text("")
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    (elsewhere / ".py-sandboxes").write_text("")  # changes nothing
    assert find_rule_file(None, "script", "../my-skill/scripts/report.py", str(elsewhere)) == str(
        scripts / ".py-sandboxes"
    )
    assert find_rule_file(None, "script", str(scripts / "report.py"), "/") == str(
        scripts / ".py-sandboxes"
    )


def test_script_through_a_symlink_uses_its_real_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "s.py").write_text("")
    (real / ".py-sandboxes").write_text("")
    (tmp_path / "s.py").symlink_to(real / "s.py")
    assert find_rule_file(None, "script", "s.py", str(tmp_path)) == str(real / ".py-sandboxes")


def test_script_directory_argument(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "__main__.py").write_text("")
    (app / ".py-sandboxes").write_text("")
    assert find_rule_file(None, "script", "app", str(tmp_path)) == str(app / ".py-sandboxes")


def test_script_without_its_file_falls_back_to_the_cwd(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "x.py").write_text("")
    assert find_rule_file(None, "script", "s/x.py", str(tmp_path)) == str(
        tmp_path / ".py-sandboxes"
    )


@pytest.mark.parametrize("kind", ["code", "stdin", "repl"])
def test_code_stdin_repl_use_the_cwd(tmp_path: Path, kind: str) -> None:
    assert find_rule_file(None, kind, None, str(tmp_path)) == str(tmp_path / ".py-sandboxes")


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown program kind"):
        find_rule_file(None, "wheel", None, "/")


def _package(root: Path) -> None:
    pkg = root / "pkg"
    (pkg / "sub").mkdir(parents=True)
    # Executing any of these would create a marker file: locating must import nothing.
    boom = f"open({str(root / 'EXECUTED')!r}, 'w').close()\n"
    (pkg / "__init__.py").write_text(boom)
    (pkg / "sub" / "__init__.py").write_text(boom)
    (pkg / "sub" / "mod.py").write_text(boom)
    (pkg / "__main__.py").write_text(boom)
    (root / "top.py").write_text(boom)


def test_module_in_a_package_without_importing_it(tmp_path: Path) -> None:
    _package(tmp_path)
    pkg = tmp_path / "pkg"
    (pkg / ".py-sandboxes").write_text("")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / ".py-sandboxes").write_text("")
    path = [str(tmp_path)]
    assert find_rule_file(None, "module", "pkg.sub.mod", str(cwd), search_path=path) == str(
        pkg / ".py-sandboxes"
    )
    (pkg / "sub" / ".py-sandboxes").write_text("")
    assert find_rule_file(None, "module", "pkg.sub.mod", str(cwd), search_path=path) == str(
        pkg / "sub" / ".py-sandboxes"
    )
    assert find_rule_file(None, "module", "pkg", str(cwd), search_path=path) == str(
        pkg / ".py-sandboxes"
    )
    assert not (tmp_path / "EXECUTED").exists()
    assert "pkg" not in sys.modules


def test_module_directories(tmp_path: Path) -> None:
    _package(tmp_path)
    path = [str(tmp_path)]
    assert module_directories("pkg.sub.mod", path) == [
        str(tmp_path / "pkg" / "sub"),
        str(tmp_path / "pkg"),
    ]
    assert module_directories("top", path) == [str(tmp_path)]
    assert module_directories("nope.x", path) == []
    assert module_directories("pkg.nope", path) == [str(tmp_path / "pkg")]
    assert module_directories("top.x", path) == []
    assert module_directories("bad-name", path) == []
    assert not (tmp_path / "EXECUTED").exists()


def test_module_default_search_path_starts_with_the_cwd(tmp_path: Path) -> None:
    _package(tmp_path)
    (tmp_path / "pkg" / ".py-sandboxes").write_text("")
    assert find_rule_file(None, "module", "pkg.sub.mod", str(tmp_path)) == str(
        tmp_path / "pkg" / ".py-sandboxes"
    )
    assert not (tmp_path / "EXECUTED").exists()


def test_unknown_module_falls_back_to_the_cwd(tmp_path: Path) -> None:
    assert find_rule_file(None, "module", "no_such_module_xyz", str(tmp_path)) == str(
        tmp_path / ".py-sandboxes"
    )
