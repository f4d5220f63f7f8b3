"""The example skill (examples/skill/csv-report) installed as an agent installs it, launched
through its shebang from another directory, under the real bwrap (SPEC §5.2, §7)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, PYTHON_SB, REPO, base_env, require

SKILL = REPO / "examples" / "skill" / "csv-report"
TOTAL = "total          342.50"


def bwrap_available() -> bool:
    try:
        return bool(get_provider("bwrap").availability())
    except ConfigError:
        return False


@pytest.fixture
def installed(home: Path) -> Path:
    """The skill copied where Claude Code installs skills, in a temporary HOME."""

    target = home / ".claude" / "skills" / "csv-report"
    shutil.copytree(SKILL, target)
    return target


@pytest.fixture
def workdir(project: Path) -> Path:
    """The directory the agent works in: its rule files grant everything, and must not count."""

    wide = "py-sandbox=false\nos-sandbox=none\npython-import=*\nnet=ALLOW|*|*|*|OUT\nexpose-rw=/\n"
    (project / ".py-sandboxes").write_text(wide)
    (project / ".local.py-sandboxes").write_text(wide)
    return project


def shebang_run(script: Path, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` by its path, as an agent would: the kernel reads its shebang."""

    path = f"{Path(PYTHON_SB).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    env = base_env(home, {"PATH": path})
    return subprocess.run(
        [str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_report_through_the_shebang_from_another_directory(
    installed: Path, workdir: Path, home: Path
) -> None:
    require(bwrap_available(), "os-sandbox=bwrap cannot run on this machine")
    result = shebang_run(installed / "scripts" / "report.py", workdir, home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "Sales by region"
    assert TOTAL in result.stdout


def test_a_sibling_script_that_imports_socket_is_stopped(
    installed: Path, workdir: Path, home: Path
) -> None:
    require(bwrap_available(), "os-sandbox=bwrap cannot run on this machine")
    upload = installed / "scripts" / "upload.py"
    # control: without python-sb the script gets its socket (and tries to connect)
    control = subprocess.run(
        [PYTHON, str(upload)], cwd=workdir, capture_output=True, text=True, timeout=60
    )
    assert control.returncode == 0, control.stderr
    assert control.stdout.startswith("upload:")
    # through its shebang, the skill's rule file stops it, whatever the current directory grants
    result = shebang_run(upload, workdir, home)
    assert result.returncode == 1
    assert result.stdout == ""
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("pysandboxes.errors.RuleModuleNotFoundError:")
    assert "'socket'" in last


def test_the_rule_files_of_the_current_directory_change_nothing(
    installed: Path, workdir: Path, home: Path
) -> None:
    """--explain from the agent's directory: the skill's file and nothing of ./ is in effect."""

    script = installed / "scripts" / "report.py"
    env = base_env(home)
    result = subprocess.run(
        [PYTHON_SB, "--explain", "--json", str(script)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    import json

    data = json.loads(result.stdout)
    text = json.dumps(data)
    assert str(installed / "scripts" / ".py-sandboxes") in text
    assert str(workdir) not in text


def test_the_manifest_is_what_the_docs_say() -> None:
    rules = (SKILL / "scripts" / ".py-sandboxes").read_text().splitlines()
    assert "os-sandbox=bwrap" in rules
    assert "learn=false" in rules
    assert "expose-ro=~/.claude/skills/csv-report/scripts" in rules
    assert not any(line.startswith('include "./') for line in rules)
    for script in ("report.py", "upload.py"):
        first = (SKILL / "scripts" / script).read_text().splitlines()[0]
        assert first == "#!/usr/bin/env -S python-sb"
        assert os.access(SKILL / "scripts" / script, os.X_OK)


@pytest.mark.parametrize(
    "line",
    [
        "#!/usr/bin/env -S uvx --from /opt/python-sb --with tabulate python-sb",
        "#!/usr/bin/env -S uvx --prerelease allow --index-url https://test.pypi.org/simple/"
        " --extra-index-url https://pypi.org/simple/ --from pysandboxes --with tabulate python-sb",
    ],
)
def test_the_uvx_shebangs_of_the_docs_fit_in_255_bytes(line: str) -> None:
    readme = (SKILL / "README.md").read_text()
    assert f"{len(line.encode())}" in readme  # the length the README states
    assert len(line.encode()) <= 255
    if "prerelease" not in line:
        assert line in readme


def test_the_hook_lets_the_skill_run_and_refuses_a_bare_python(
    installed: Path, workdir: Path
) -> None:
    """The coding-agent hook and the skill together (docs/agents.md)."""

    from pysandboxes.integrations.check import Checker

    checker = Checker(cwd=str(workdir))
    assert checker.check(str(installed / "scripts" / "report.py")) == []
    [finding] = checker.check(f"python3 {installed / 'scripts' / 'report.py'}")
    assert finding.kind == "python"
