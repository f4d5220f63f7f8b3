"""bench/profile_hook.py, the development tool that profiles the Python layer over a real run:
its ``--in-hook`` cProfile shows the hook's handlers, which CPython hides from a profiler while
an audit hook runs unless the hook is marked traceable (docs/performance.md)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import REPO, base_env, run_python

PROGRAM = "for i in range(300):\n    open('f%d' % (i % 3), 'w').close()\n"


def _profile(tmp_path: Path, *flags: str) -> str:
    (tmp_path / ".py-sandboxes").write_text(
        f"py-sandbox=true\nos-sandbox=${{OS_SANDBOX:-subprocess}}\nexpose-rw={tmp_path}\n"
    )
    (tmp_path / "w.py").write_text(PROGRAM)
    tool = str(REPO / "bench" / "profile_hook.py")
    result = run_python(
        [tool, "--mode", "cprofile", *flags, "--top", "400", "--", "w.py"],
        cwd=tmp_path,
        env=base_env(tmp_path),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "== cProfile, python-sb's guard functions by own time" in result.stderr
    return result.stderr


def test_in_hook_shows_the_handlers(tmp_path: Path) -> None:
    report = _profile(tmp_path, "--in-hook")
    assert "file_events.py" in report and "(on_open)" in report, report[-3000:]


def test_without_it_the_handlers_are_hidden(tmp_path: Path) -> None:
    """The control: the same run without ``--in-hook`` shows the arming, not the handlers."""

    report = _profile(tmp_path)
    assert "hook.py" in report and "(install)" in report, report[-3000:]
    assert "(on_open)" not in report, report[-3000:]
