"""The real-world suite's workflow: learn, review, lock, replay under every provider.

A run is learned once with ``python-sb --learn=FILE`` (a new rule file from the template, which
says ``py-sandbox=true`` and ``os-sandbox=${OS_SANDBOX:-...}``), locked as a reviewer would
(``learn=false`` appended), then replayed with ``OS_SANDBOX`` set to each provider, the Python
layer on, and compared with the same command under plain python.

Every run gets the same small environment (``tests.helpers.base_env``) plus two canaries a
reviewer must never see granted: a variable no program reads, and a secret-looking one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import PYTHON, base_env, require, run_python, run_sb

PROVIDERS = ("subprocess", "landlock", "bwrap", "unshare")
SDISTS = Path(__file__).resolve().parent / "sdists.txt"
#: Set in every run's environment, read by no program: never granted.
CANARIES = {"REALWORLD_NEVER_READ": "canary", "AWS_SECRET_ACCESS_KEY": "canary-secret"}


def sdist_cache() -> Path:
    """Where ``scripts/setup.sh`` puts the source distributions (outside the repository)."""

    default = Path.home() / ".cache" / "pysandboxes" / "sdists"
    return Path(os.environ.get("PYSANDBOXES_SDIST_CACHE", default))


def pinned() -> dict[str, str]:
    """``name -> version`` of ``sdists.txt``."""

    pins = {}
    for line in SDISTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[name] = version
    return pins


def _normal(filename: str) -> str:
    return filename.replace("_", "-").lower()


def unpack(name: str, destination: Path) -> Path:
    """Unpack the cached sdist of ``name`` (pinned version) into ``destination``; its root.

    Missing from the cache: skipped with the command that fetches it, a failure under
    PYSANDBOXES_REQUIRE_ALL=1."""

    version = pinned()[name]
    wanted = f"{_normal(name)}-{version}.tar.gz"
    cache = sdist_cache()
    found = [p for p in cache.glob("*.tar.gz") if _normal(p.name) == wanted]
    require(found, f"{name}=={version} is not in {cache} (run scripts/setup.sh to fetch it)")
    with tarfile.open(found[0]) as archive:
        archive.extractall(destination, filter="data")
    roots = [p for p in destination.iterdir() if p.is_dir()]
    assert len(roots) == 1, roots
    return roots[0]


def run_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every run: no byte-code caches (see ``docs/learning.md``, a learning
    run would otherwise leave caches the replay reads through ``marshal``), no pytest plugin
    loaded because it happens to be installed in the test environment (the agent frameworks'
    extras bring plugins that read ``/proc``: the projects' suites run with their own
    dependencies only), and the canaries."""

    fixed = {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return base_env(home, {**fixed, **CANARIES, **(extra or {})})


def pytest_counts(output: str) -> dict[str, int]:
    """The counts of pytest's ``-q`` summary line (``663 passed, 1 skipped, 2332 subtests
    passed in 11.0s``), warnings left out: they are no result."""

    for line in reversed(output.strip().splitlines()):
        match = re.fullmatch(r"=*\s*(.*?) in [0-9.]+s(?: \(.*\))?\s*=*", line.strip())
        if match:
            counts = {k: int(n) for n, k in re.findall(r"(\d+) ((?:subtests )?\w+)", match[1])}
            counts.pop("warnings", None)
            counts.pop("warning", None)
            return counts
    raise AssertionError(f"no pytest summary in:\n{output[-3000:]}")


@dataclass
class Rules:
    """The active (uncommented) lines of a learned rule file, by key."""

    text: str

    def values(self, key: str) -> list[str]:
        out = []
        for line in self.text.splitlines():
            line = line.strip()
            if line.startswith(key + "="):
                out.append(line.split("=", 1)[1].split("  #", 1)[0].strip())
        return out

    def env_names(self) -> set[str]:
        return {value.split("=", 1)[0] for value in self.values("env")}

    def imports(self) -> set[str]:
        return {m.strip() for value in self.values("python-import") for m in value.split(",")}

    def apis(self) -> set[str]:
        return {value.removeprefix("ALLOW:") for value in self.values("python-api")}


def check_reviewable(
    rules: Rules, env: dict[str, str], *, network: bool = False, system: Sequence[str] = ()
) -> None:
    """What a reviewer expects of any learned file of this suite; ``system``: the paths outside
    the project the run needs read-only (``/bin/sh`` for ``subprocess.getoutput``)."""

    names = rules.env_names()
    for canary in CANARIES:
        assert canary not in names, f"env={canary} was granted, never read by name:\n{rules.text}"
        assert canary not in rules.text, f"{canary} is in the learned file:\n{rules.text}"
    assert names <= set(env) - {"PYTHONDONTWRITEBYTECODE"}, names
    for path in rules.values("expose-rw"):
        assert path in (".",) or path.startswith(("./", "${TMPDIR")), (
            f"expose-rw={path}: outside the project and the temporary directory"
        )
    for path in rules.values("expose-ro"):
        inside = path == "." or path.startswith(("./", "${TMPDIR", "${VIRTUAL_ENV}", "~/"))
        assert inside or path in system, (
            f"expose-ro={path}: outside the project, the environment and the home"
        )
    if not network:
        assert rules.values("net") == [], "an offline run learned net= rules"


def learn(
    args: Sequence[str], cwd: Path, env: dict[str, str], rule_file: Path, timeout: float = 240
) -> tuple[str, Rules]:
    """Learn ``args`` into ``rule_file`` (new), then lock it; the run's stdout and the rules."""

    assert not rule_file.exists()
    result = run_sb([f"--learn={rule_file}", *args], cwd=cwd, env=env, timeout=timeout)
    assert rule_file.exists(), f"nothing learned:\n{result.stderr[-3000:]}"
    text = rule_file.read_text()
    assert "py-sandbox=true" in text and "os-sandbox=${OS_SANDBOX:-" in text, text
    with rule_file.open("a") as handle:
        handle.write("\n# Reviewed, locked.\nlearn=false\n")
    return result.stdout, Rules(text)


def provider_available(name: str) -> str | None:
    """``None`` when ``os-sandbox=name`` can run here, else why not."""

    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    return None if state.ok else f"os-sandbox={name}: {state.reason} ({state.install_hint})"


def _probe_of_a_missing_module(denial: dict[str, object], roots: Sequence[Path]) -> bool:
    """An import refused in a replay of a module that exists nowhere: the program's
    ``try: import X / except ImportError`` probe. Such a refusal is no denial when the guard can
    tell the module would not be found; with a library's own meta-path finder in play (six's
    ``six.moves`` importer, toolz's ``tlz`` loader) it cannot without running that finder, so
    it logs the refusal (docs/python-layer.md, "Probes"). The program's result is the same."""

    if denial.get("kind") != "import":
        return False
    top = str(denial.get("target", "")).split(".")[0]
    if not top or importlib.util.find_spec(top) is not None:
        return False
    return not any((root / top).exists() or (root / f"{top}.py").exists() for root in roots)


def _probe_of_a_missing_file(denial: dict[str, object]) -> bool:
    """A read refused in a replay under ``bwrap``/``unshare`` of a file that does not exist
    (pdb's ``~/.pdbrc``): learning writes no line for it and, on the host's tree, the guard
    raises ``FileNotFoundError`` with no denial; inside a namespace's tree it cannot tell
    whether the host has the file, and still writes the refusal (docs/python-layer.md,
    *Files that do not exist*)."""

    target = denial.get("target")
    return (
        denial.get("kind") == "file"
        and denial.get("detail") == "read"
        and isinstance(target, str)
        and not os.path.lexists(target)
    )


@dataclass
class Replay:
    provider: str
    returncode: int
    stdout: str
    stderr: str
    refused: list[dict[str, object]]


def replay(
    provider: str,
    args: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    denials: Path,
    roots: Sequence[Path] = (),
    timeout: float = 240,
) -> Replay:
    """Run ``args`` under the locked rule file with ``OS_SANDBOX=provider``; the refusals of
    ``--denials=FILE``, less, under ``bwrap``/``unshare``, the reads of files that exist
    nowhere (:func:`_probe_of_a_missing_file`; the program's result is compared anyway)."""

    result = run_sb(
        [f"--denials={denials}", *args],
        cwd=cwd,
        env={**env, "OS_SANDBOX": provider},
        timeout=timeout,
    )
    lines = denials.read_text().splitlines() if denials.exists() else []
    refused = [json.loads(line) for line in lines]
    refused = [d for d in refused if not _probe_of_a_missing_module(d, [cwd, *roots])]
    if provider in ("bwrap", "unshare"):  # the guard sees the sandbox's tree, not the host's
        refused = [d for d in refused if not _probe_of_a_missing_file(d)]
    return Replay(provider, result.returncode, result.stdout, result.stderr, refused)


def plain(
    args: Sequence[str], cwd: Path, env: dict[str, str], timeout: float = 240
) -> tuple[int, str]:
    """The control: the same command under plain python (the interpreter python-sb runs)."""

    result = run_python(list(args), cwd=cwd, env=env, timeout=timeout)
    return result.returncode, result.stdout + result.stderr


__all__ = ["PYTHON", "Replay", "Rules", "learn", "plain", "replay"]
