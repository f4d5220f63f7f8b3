"""``--denials=FILE`` under the namespace providers (``bwrap``, ``unshare``).

The Python layer appends each refusal to the file from inside the sandbox. The file usually lies
outside every exposure (a CI log directory, the test's own directory): the mount tree must hold
it, writable, as Landlock's ruleset does. Without that the refusals were lost silently, and a
"no refusal" check on an empty file passed for the wrong reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import base_env, require, run_sb


def provider_ok(name: str) -> None:
    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    require(state.ok, f"os-sandbox={name}: {state.reason} ({state.install_hint})")


@pytest.mark.kernel
@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_refusals_reach_a_denials_file_outside_every_exposure(
    project: Path, home: Path, provider: str
) -> None:
    provider_ok(provider)
    logs = project.parent / "logs"
    logs.mkdir()
    denials = logs / "denials.jsonl"
    other = logs / "other.txt"
    (project / ".py-sandboxes").write_text(f"expose-ro={project}\n")
    code = (
        "try:\n"
        "    import json\n"
        "except ImportError:\n"
        "    print('import refused')\n"
        f"try:\n    open({str(other)!r}, 'w')\n"
        "except OSError:\n"
        "    print('other refused')\n"
    )
    result = run_sb(
        [f"--os-sandbox={provider}", f"--denials={denials}", "-c", code],
        cwd=project,
        env=base_env(home),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["import refused", "other refused"]
    records = [json.loads(line) for line in denials.read_text().splitlines()]
    assert {"kind": "import", "target": "json"}.items() <= records[0].items(), records
    assert not other.exists()  # the file alone is writable, not its directory
