"""A read of a file that does not exist, which no rule exposes (pdb looking for ``~/.pdbrc``),
fails with ``FileNotFoundError`` under every enforcer, as without the sandbox, and is no denial;
a read of a file that exists and is not exposed is still refused (docs/python-layer.md, *Files
that do not exist*)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import base_env, run_python, run_sb

PROGRAM = """
import sys
for path in sys.argv[1:]:
    try:
        open(path).read()
        print("read")
    except FileNotFoundError as exc:
        print("not found", exc.errno, type(exc).__name__)
    except PermissionError as exc:
        print("refused", exc.errno, type(exc).__name__)
"""


@pytest.fixture
def paths(project: Path, home: Path) -> tuple[Path, Path]:
    (project / "rc.py").write_text(PROGRAM)
    (project / ".py-sandboxes").write_text("expose-ro=.\n")
    present = home / ".present.rc"
    present.write_text("x\n")
    return home / ".pdbrc", present


def test_control_without_the_sandbox(paths: tuple[Path, Path], project: Path, home: Path) -> None:
    missing, present = paths
    result = run_python([str(project / "rc.py"), str(missing), str(present)], cwd=project)
    assert result.stdout.splitlines() == ["not found 2 FileNotFoundError", "read"]


#: Every enforcer, the Python layer on and off (subprocess with the layer off enforces nothing:
#: not a configuration to test).
ENFORCERS = [
    pytest.param(provider, layer, id=f"{'py-on' if layer else 'py-off'}-{provider}")
    for provider in ("subprocess", "landlock", "bwrap", "unshare")
    for layer in (True, False)
    if layer or provider != "subprocess"
]


@pytest.mark.parametrize(("provider", "python_layer"), ENFORCERS)
def test_a_missing_file_is_not_found_under_every_enforcer(
    provider: str, python_layer: bool, paths: tuple[Path, Path], project: Path, home: Path
) -> None:
    if provider != "subprocess":
        provider_ok(provider)
    missing, present = paths
    denials = project.parent / "denials.jsonl"
    result = run_sb(
        [
            f"--os-sandbox={provider}",
            f"--py-sandbox={'true' if python_layer else 'false'}",
            f"--denials={denials}",
            "rc.py",
            str(missing),
            str(present),
        ],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    refused = [json.loads(line) for line in denials.read_text().splitlines()]
    if python_layer and provider in ("bwrap", "unshare"):
        # The guard decides first, inside a tree that holds neither file, where it cannot tell
        # whether the host has them: both refused as before, written with their rule.
        assert lines == ["refused 13 RulePermissionError"] * 2
        assert [(d["target"], d["suggestion"]) for d in refused] == [
            (str(missing), f"expose-ro={missing}"),
            (str(present), f"expose-ro={present}"),
        ]
    elif python_layer:
        # The guard decides first: a FileNotFoundError subclass, no denial, for the missing
        # file; the existing one is refused and written to --denials.
        assert lines == ["not found 2 RuleFileNotFoundError", "refused 13 RulePermissionError"]
        assert [d["target"] for d in refused] == [str(present)]
    elif provider == "landlock":
        # The kernel looks the path up before Landlock judges the open: ENOENT.
        assert lines == ["not found 2 FileNotFoundError", "refused 13 PermissionError"]
    else:
        # bwrap/unshare: an unexposed path is absent from the sandbox's tree.
        assert lines == ["not found 2 FileNotFoundError", "not found 2 FileNotFoundError"]
