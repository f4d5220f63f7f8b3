"""The seed's skill scenario, end to end from clean directories through the installed command.

The author writes a skill with no rule file, learns it (``--learn=<skill>/scripts/.py-sandboxes``
from another directory), reviews what the learned file grants, pins the provider and locks it;
a user installs the skill under ``~/.claude/skills`` and runs it from a project of theirs
whose own rule files grant everything -- through its shebang, and through
``uvx --from <this repository> python-sb`` (python-sb not installed: uv builds it from the
clone, as README.md says until it is released). A sibling script that tries the network is
stopped by the skill's file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.helpers import PYTHON, PYTHON_SB, REPO, base_env, require, run_sb

REPORT = """\
#!/usr/bin/env -S python-sb
# Launched by the shebang through python-sb, never by a bare `python`.
# Needs on the host: python-sb; no third-party import.
# Rules: ./.py-sandboxes, next to this script, the permission manifest of this skill.
import csv
import sys

totals: dict[str, float] = {}
with open(sys.argv[1], newline="", encoding="utf-8") as handle:
    for row in csv.DictReader(handle):
        totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
for region, amount in sorted(totals.items()):
    print(f"{region:<10}{amount:>10.2f}")
print(f"{'total':<10}{sum(totals.values()):>10.2f}")
"""
UPLOAD = """\
#!/usr/bin/env -S python-sb
import socket
print("upload:", socket.gethostname())
"""
SALES = "region,amount\nnorth,120.50\nsouth,80.00\nnorth,42.25\n"
EXPECTED = "north         162.75\nsouth          80.00\ntotal         242.75\n"
#: The variables through which a machine reaches the package index (a proxy, its CA).
NETWORK_VARIABLES = frozenset(
    {"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY"}
    | {"https_proxy", "http_proxy", "no_proxy", "all_proxy", "UV_INDEX_URL", "UV_NATIVE_TLS"}
)
WIDE = "py-sandbox=false\nos-sandbox=none\npython-import=*\nnet=ALLOW|*|*|*|OUT\nexpose-rw=/\n"


def bwrap_available() -> bool:
    try:
        return bool(get_provider("bwrap").availability())
    except ConfigError:
        return False


def write_skill(root: Path) -> Path:
    scripts = root / "scripts"
    scripts.mkdir(parents=True)
    (root / "SKILL.md").write_text("Run `<skill dir>/scripts/report.py <csv>`.\n")
    for name, text in (("report.py", REPORT), ("upload.py", UPLOAD)):
        (scripts / name).write_text(text)
        (scripts / name).chmod(0o755)
    return scripts


def rule_lines(text: str) -> list[str]:
    return [
        line.split("  #", 1)[0].strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def by_path(script: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``script`` by its path, as an agent does: the kernel reads its shebang."""

    return subprocess.run(
        [str(script), "sales.csv"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def uv_tool() -> str | None:
    """``uvx`` next to the test interpreter (the dev extra installs uv), or on PATH."""

    here = Path(PYTHON).parent / "uvx"
    return str(here) if here.exists() else shutil.which("uvx")


def test_the_skill_learned_reviewed_installed_and_run(tmp_path: Path) -> None:
    require(bwrap_available(), "os-sandbox=bwrap cannot run on this machine")
    uvx = uv_tool()
    require(uvx, "uvx not found (pip install uv, in the dev extra)")
    assert uvx is not None

    # -- the author: a skill without rules, learned once from another directory -------------
    author = tmp_path / "author"
    scripts = write_skill(author / ".claude" / "skills" / "my-skill")
    manifest = scripts / ".py-sandboxes"
    desk = tmp_path / "author-desk"
    desk.mkdir()
    (desk / "sales.csv").write_text(SALES)
    learn = run_sb(
        [f"--learn={manifest}", str(scripts / "report.py"), "sales.csv"],
        cwd=desk,
        env=base_env(author),
    )
    assert learn.returncode == 0, learn.stderr
    assert learn.stdout == EXPECTED
    learned = rule_lines(manifest.read_text())
    # The script's directory under home is written with ~, so the file works for any user
    # who installs the skill at the same place; the input is read from the current directory.
    assert "expose-ro=~/.claude/skills/my-skill/scripts" in learned
    assert "expose-ro=." in learned
    assert not [line for line in learned if line.startswith(("net=", "env=", "expose-rw="))]

    # -- the review: what the manifest grants, riskiest first --------------------------------
    review = run_sb(["--review", "/dev/null", str(manifest)], cwd=desk, env=base_env(author))
    assert "+ expose-ro=~/.claude/skills/my-skill/scripts" in review.stdout, review.stdout
    assert "python-import=csv" in review.stdout

    # -- pin the kernel layer and lock it, as the seed says; the review shows the change ----
    before = manifest.read_text()
    pinned = [
        "os-sandbox=bwrap" if line.startswith("os-sandbox=") else line
        for line in before.splitlines()
    ]
    manifest.write_text("\n".join([*pinned, "learn=false", ""]))
    old = tmp_path / "learned.py-sandboxes"
    old.write_text(before)
    change = run_sb(["--review", str(old), str(manifest)], cwd=desk, env=base_env(author))
    assert change.returncode == 0, change.stdout  # narrower only: nothing high-risk added
    assert "~ lock: (none) -> learn=false" in change.stdout

    # -- the user: installs it, runs it from a project whose rules grant everything ---------
    user = tmp_path / "user"
    installed = user / ".claude" / "skills" / "my-skill"
    shutil.copytree(author / ".claude" / "skills" / "my-skill", installed, symlinks=True)
    project = tmp_path / "user-project"
    project.mkdir()
    (project / "sales.csv").write_text(SALES)
    (project / ".py-sandboxes").write_text(WIDE)
    (project / ".local.py-sandboxes").write_text(WIDE)
    path = f"{Path(PYTHON_SB).parent}{os.pathsep}/usr/bin:/bin"
    env = base_env(user, {"PATH": path})
    ran = by_path(installed / "scripts" / "report.py", project, env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == EXPECTED

    stopped = by_path(installed / "scripts" / "upload.py", project, env)
    assert stopped.returncode == 1
    assert stopped.stdout == ""
    last = stopped.stderr.strip().splitlines()[-1]
    assert last == (
        "pysandboxes.errors.RuleModuleNotFoundError: Module named 'socket' is not allowed by a rule"
    )

    # -- without python-sb installed: uvx builds it from the clone, by hand and by shebang --
    uv_env = base_env(
        user,
        {
            "PATH": f"{Path(uvx).parent}{os.pathsep}/usr/bin:/bin",
            "UV_CACHE_DIR": os.environ.get(
                "UV_CACHE_DIR", str(Path.home() / ".cache" / "pysandboxes" / "uv")
            ),
            "UV_PYTHON": sys.executable,
            "UV_PYTHON_DOWNLOADS": "never",
            # How this machine reaches the package index (uv fetches the build backend).
            **{k: v for k, v in os.environ.items() if k in NETWORK_VARIABLES},
        },
    )
    script = installed / "scripts" / "report.py"
    by_hand = subprocess.run(
        [uvx, "--from", str(REPO), "python-sb", str(script), "sales.csv"],
        cwd=project,
        env=uv_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert by_hand.returncode == 0, by_hand.stderr
    assert by_hand.stdout == EXPECTED
    shebang = f"#!/usr/bin/env -S uvx --from {REPO} python-sb"
    assert len(shebang.encode()) <= 255
    through_uvx = installed / "scripts" / "report_uvx.py"
    through_uvx.write_text(shebang + "\n" + REPORT.split("\n", 1)[1])
    through_uvx.chmod(0o755)
    ran = by_path(through_uvx, project, uv_env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == EXPECTED
