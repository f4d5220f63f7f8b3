"""Legitimate programs keep working under the rules of the misuse corpus.

A sandbox that refuses everything would pass every attack; this program does, under python-sb,
the everyday things its rules grant (files read and written, pathlib, shutil, tempfile,
zipfile, sqlite3, a loopback connection, name resolution of localhost, one granted subprocess,
a granted environment variable, an ImportError fallback) and must end normally.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import base_env, run_sb
from tests.redteam.misuse.test_misuse import listeners, world  # noqa: F401  (fixtures)

LEGIT = Path(__file__).parent / "legit"


def test_everyday_program_runs(world: dict[str, Path]) -> None:  # noqa: F811
    project = world["project"]
    shutil.copy(LEGIT / "everyday.py", project / "everyday.py")
    shutil.copy(LEGIT / ".py-sandboxes.rules", project / ".py-sandboxes")
    env = base_env(world["home"], {"GRANTED_VAR": "granted", "SECRET_TOKEN": "s3cr3t"})
    result = run_sb(["--os-sandbox=subprocess", "everyday.py"], cwd=project, env=env, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["read"] == "data"
    assert lines["pathlib"] == "data"
    assert lines["listdir"] == "True"
    # os.stat is not judged (metadata, as under Landlock): only ignore= hides existence
    assert lines["exists"] == "True True"
    assert lines["written"] == "{'point': {'x': 1, 'y': 2}}"
    assert lines["tempfile"] == "scratch True"
    assert lines["zip"] == "zipped"
    assert lines["sqlite"] == "1"
    assert lines["connect"] == "ok"
    assert lines["resolve"] == "127.0.0.1"
    assert lines["subprocess"] == "child"
    assert lines["linked"] == "data"
    assert lines["env"] == "granted"
    assert lines["fallback"] == "ok"
    assert lines["done"] == "ok"


def test_standard_library_tour(world: dict[str, Path]) -> None:  # noqa: F811
    """Everyday standard-library use with every import allowed: logging (frames), warnings,
    argparse, strptime (a C-level import), dataclasses and enum (generated code), typing,
    inspect.signature, unittest.mock, traceback formatting, zoneinfo, tempfile, pathlib."""

    project = world["project"]
    shutil.copy(LEGIT / "stdlib_tour.py", project / "stdlib_tour.py")
    (project / ".py-sandboxes").write_text("expose-ro=.\npython-import=*\n")
    result = run_sb(
        ["--os-sandbox=subprocess", "stdlib_tour.py"], cwd=project, env=base_env(world["home"])
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "tour done"
    assert "tour <module> logging works" in result.stderr


def test_third_party_packages(world: dict[str, Path]) -> None:  # noqa: F811
    """Packages from the site-packages in use (hypothesis, pygments, packaging) keep working:
    their own imports, generated code and introspection are theirs."""

    import importlib.util

    from tests.helpers import require

    require(importlib.util.find_spec("hypothesis"), "hypothesis is not installed")
    require(importlib.util.find_spec("pygments"), "pygments is not installed")
    project = world["project"]
    shutil.copy(LEGIT / "third_party.py", project / "third_party.py")
    (project / ".py-sandboxes").write_text(
        "expose-ro=.\npython-import=hypothesis,pygments,packaging,pluggy,typing_extensions,"
        "sortedcontainers,iniconfig\n"
    )
    result = run_sb(
        ["--os-sandbox=subprocess", "third_party.py"],
        cwd=project,
        env=base_env(world["home"]),
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["True", "True", "third-party done"]
