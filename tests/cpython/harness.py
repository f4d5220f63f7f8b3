"""CPython's own regression tests, run test by test with plain python and under python-sb.

The strictest outside judge of "python-sb behaves like python" is CPython's ``test`` package,
which nobody here wrote (issue 27). :func:`run_module` runs one of its modules with
``python -m test MODULE --junit-xml FILE``, either with the plain interpreter or with the
``python-sb`` of the same environment under :func:`permissive_rules` -- a rule file that grants
everything the rule language can -- and :func:`outcomes` reads the per-test results from the
JUnit XML. With everything granted, every difference is a fidelity bug, unless the rules
themselves require it: such a difference is listed, with its reason, in the one reviewed file
``known_differences.txt`` next to this module (:func:`load_known`).

A difference seen once is run again, both ways, for the differing tests only
(:func:`confirm`): CPython's suite holds a few timing-sensitive tests that can fail on a loaded
machine with plain python too, and a standing check must not fail CI for them.

Command line (a whole module list, outside pytest)::

    .venv/bin/python -m tests.cpython.harness [--python .venv-3.12/bin/python]
        [--provider subprocess] test_json test_shutil ...
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
KNOWN = HERE / "known_differences.txt"
#: How long one module may take, with plain python or under python-sb (generous: a loaded
#: 2-core machine; the slowest module of the full list takes about two minutes alone).
MODULE_TIMEOUT = 1200

#: The PROVIDERS field of a line for a test that neither side runs.
NOT_RUN = "not-run"

#: The outcome of one test case, as the JUnit XML of ``-m test`` records it.
PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"


def permissive_rules(provider: str, scratch: Path) -> str:
    """The rule file of the comparison: everything the rule language can grant.

    ``scratch`` is the writable working area (the JUnit file, regrtest's temporary directory
    and its ``test_python_*`` working directories); the private temporary directory python-sb
    gives every run is writable too."""

    return "\n".join(
        (
            f"os-sandbox={provider}",
            "python-import=*",
            "python-api=ALLOW:*",
            "expose-ro=/",
            f"expose-rw={scratch}",
            "env=*=${*}",
            "net=ALLOW|*|*|*|*",
            "",
        )
    )


def outcomes(junit: Path) -> dict[str, list[str]]:
    """Test name -> the outcomes of every test case of that name, sorted.

    Doctests of one module share a name (``json``), so a name maps to a list."""

    result: dict[str, list[str]] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        name = case.get("name")
        if name is None:
            # regrtest writes a failed subTest as a testcase without a name; its test then
            # has no entry of its own, which the comparison sees.
            continue
        outcome = PASSED
        for child in case:
            if child.tag == "failure":
                outcome = FAILED
            elif child.tag == "error":
                outcome = ERROR
            elif child.tag == "skipped":
                outcome = SKIPPED
        if case.get("status") == "skipped" or case.get("result") == "skipped":
            outcome = SKIPPED
        result.setdefault(name, []).append(outcome)
    for values in result.values():
        values.sort()
    return result


def messages(junit: Path) -> dict[str, str]:
    """Test name -> the first lines of its failure or error text (for a readable report)."""

    result: dict[str, str] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        for child in case:
            if child.tag in ("failure", "error"):
                text = (child.text or child.get("message") or "").strip().splitlines()
                result[case.get("name", "?")] = " / ".join(text[-3:])[:400]
    return result


@dataclass(frozen=True)
class Run:
    """One run of a module: its outcomes and failure texts, or why it produced none."""

    outcomes: dict[str, list[str]]
    messages: dict[str, str]
    returncode: int
    tail: str  # the end of the combined output, shown when something goes wrong


def python_sb_of(python: str) -> str:
    """The ``python-sb`` console script of the environment of ``python``."""

    return str(Path(python).with_name("python-sb"))


def run_module(
    python: str,
    module: str,
    work: Path,
    *,
    provider: str | None,
    match: Sequence[str] = (),
    ignore: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = MODULE_TIMEOUT,
) -> Run:
    """Run ``python -m test MODULE`` plainly (``provider=None``) or under python-sb.

    ``match`` restricts the run to those test names (``--matchfile``), ``ignore`` leaves those
    out (``--ignorefile``: the ``not-run`` lines of the reviewed list). ``work`` must be an
    empty directory of its own: it holds the rule file, the JUnit file and regrtest's
    working directories."""

    python = os.path.abspath(python)  # the runs' cwd is ``work`` (not resolved: a venv's link)
    work.mkdir(parents=True, exist_ok=True)
    junit = work / "junit.xml"
    junit.unlink(missing_ok=True)
    tempdir = work / "regrtest"
    tempdir.mkdir(exist_ok=True)
    # --dont-add-python-opts: from 3.12 regrtest may re-exec the interpreter with its own
    # options; under python-sb that would be a plain python outside the rules.
    tail = ["-m", "test", module, "--junit-xml", str(junit), "--tempdir", str(tempdir)]
    tail += ["--dont-add-python-opts"]
    if match:
        matchfile = work / "match.txt"
        matchfile.write_text("".join(name + "\n" for name in match))
        tail += ["--matchfile", str(matchfile)]
    if ignore:
        ignorefile = work / "ignore.txt"
        ignorefile.write_text("".join(name + "\n" for name in ignore))
        tail += ["--ignorefile", str(ignorefile)]
    run_env = dict(os.environ if env is None else env)
    run_env.pop("PYTEST_CURRENT_TEST", None)
    run_env.pop("PYTEST_XDIST_WORKER", None)
    if provider is None:
        plain_tmp = work / "tmp"
        plain_tmp.mkdir(exist_ok=True)
        run_env["TMPDIR"] = str(plain_tmp)
        argv = [python, *tail]
    else:
        rules = work / "cpython.py-sandboxes"
        rules.write_text(permissive_rules(provider, work))
        argv = [python_sb_of(python), f"--pysandboxes-config={rules}", *tail]
    try:
        done = subprocess.run(
            argv,
            cwd=work,
            env=run_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
        output = done.stdout.decode(errors="replace")
        code = done.returncode
    except subprocess.TimeoutExpired as expired:
        output = (expired.stdout or b"").decode(errors="replace") + "\n[timed out]"
        code = -1
    found = outcomes(junit) if junit.exists() and junit.stat().st_size else {}
    texts = messages(junit) if found else {}
    return Run(found, texts, code, output[-3000:])


@dataclass(frozen=True)
class Difference:
    """One test whose outcomes differ between plain python and python-sb."""

    test: str
    plain: tuple[str, ...]
    sandboxed: tuple[str, ...]
    message: str

    def describe(self) -> str:
        """One line for the report."""

        text = f"{self.test}: plain {list(self.plain)} vs python-sb {list(self.sandboxed)}"
        return text + (f"\n      {self.message}" if self.message else "")


def compare(plain: Run, sandboxed: Run) -> list[Difference]:
    """The tests whose outcomes differ (a test missing on one side differs too)."""

    names = sorted(set(plain.outcomes) | set(sandboxed.outcomes))
    return [
        Difference(
            name,
            tuple(plain.outcomes.get(name, [])),
            tuple(sandboxed.outcomes.get(name, [])),
            sandboxed.messages.get(name, "") or plain.messages.get(name, ""),
        )
        for name in names
        if plain.outcomes.get(name, []) != sandboxed.outcomes.get(name, [])
    ]


@dataclass(frozen=True)
class Known:
    """One line of ``known_differences.txt``: a difference the rules require, and why."""

    test: str  # a test name, or a prefix ending in '*'
    providers: frozenset[str]  # empty: every provider; {"not-run"}: run on neither side
    pythons: frozenset[str]  # "3.12"...; empty: every version
    reason: str
    line: int

    @property
    def not_run(self) -> bool:
        """A test left out of both runs: it hangs or fails with plain python on the test
        machine for a reason of the machine's (the reason says which)."""

        return self.providers == frozenset({NOT_RUN})

    def matches(self, test: str, provider: str, python_version: str) -> bool:
        """Whether this line excuses ``test`` under ``provider`` and ``python_version``."""

        if self.not_run or (self.providers and provider not in self.providers):
            return False
        if self.pythons and python_version not in self.pythons:
            return False
        if self.test.endswith("*"):
            return test.startswith(self.test[:-1])
        return test == self.test


def load_known(path: Path = KNOWN) -> list[Known]:
    """Read the reviewed list. A line: ``TEST | PROVIDERS | PYTHONS | REASON``, where
    PROVIDERS and PYTHONS are comma lists or ``*``; ``#`` starts a comment line. A line
    without a reason is an error: every listed difference must say which rule requires it."""

    known: list[Known] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [field.strip() for field in line.split("|", 3)]
        if len(fields) != 4 or not fields[0] or not fields[3]:
            raise ValueError(f"{path.name}({number}): want 'TEST | PROVIDERS | PYTHONS | REASON'")

        def names(field: str) -> frozenset[str]:
            return frozenset() if field == "*" else frozenset(x.strip() for x in field.split(","))

        known.append(Known(fields[0], names(fields[1]), names(fields[2]), fields[3], number))
    return known


def version_of(python: str) -> str:
    """``"3.12"`` for a 3.12 interpreter."""

    done = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def has_test_package(python: str) -> bool:
    """Whether ``python`` has CPython's ``test`` package with its runner (Debian splits it
    off into ``libpythonX.Y-testsuite``; pyenv's builds keep it)."""

    done = subprocess.run(
        [python, "-c", "import test.libregrtest, test.support"], capture_output=True, check=False
    )
    return done.returncode == 0


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing one module: differences not excused, and excused ones."""

    unexplained: list[Difference]
    excused: list[tuple[Difference, Known]]
    plain: Run
    sandboxed: Run


def confirm(
    python: str,
    module: str,
    work: Path,
    provider: str,
    known: Iterable[Known] = (),
    *,
    env: Mapping[str, str] | None = None,
) -> Comparison:
    """Compare ``module`` plain vs python-sb under ``provider``; run the differing tests once
    more both ways and keep only the differences seen twice."""

    known = list(known)
    python = os.path.abspath(python)
    version = version_of(python)
    left_out = [k.test for k in known if k.not_run and (not k.pythons or version in k.pythons)]
    plain = run_module(python, module, work / "plain", provider=None, ignore=left_out, env=env)
    sandboxed = run_module(python, module, work / "sb", provider=provider, ignore=left_out, env=env)
    differences = compare(plain, sandboxed)
    if differences and plain.outcomes and sandboxed.outcomes:
        names = [d.test for d in differences]
        plain2 = run_module(python, module, work / "plain2", provider=None, match=names, env=env)
        sb2 = run_module(python, module, work / "sb2", provider=provider, match=names, env=env)
        again = {d.test for d in compare(plain2, sb2)}
        differences = [d for d in differences if d.test in again]
    unexplained: list[Difference] = []
    excused: list[tuple[Difference, Known]] = []
    for difference in differences:
        reason = next((k for k in known if k.matches(difference.test, provider, version)), None)
        if reason is None:
            unexplained.append(difference)
        else:
            excused.append((difference, reason))
    return Comparison(unexplained, excused, plain, sandboxed)


def main(argv: Sequence[str] | None = None) -> int:
    """Compare modules from the command line and print every difference."""

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--provider", default="subprocess")
    parser.add_argument("--keep", help="a directory to keep the runs in (default: temporary)")
    parser.add_argument("modules", nargs="+")
    args = parser.parse_args(argv)
    known = load_known()
    status = 0
    with tempfile.TemporaryDirectory(prefix="cpython-tests-") as temporary:
        base = Path(args.keep or temporary)
        for module in args.modules:
            result = confirm(args.python, module, base / module, args.provider, known)
            plain_n = sum(len(v) for v in result.plain.outcomes.values())
            sb_n = sum(len(v) for v in result.sandboxed.outcomes.values())
            print(
                f"{module}: {plain_n} plain, {sb_n} python-sb; "
                f"{len(result.unexplained)} unexplained, {len(result.excused)} listed"
            )
            if not result.plain.outcomes or not result.sandboxed.outcomes:
                print("   no results:", result.sandboxed.tail[-1500:] or result.plain.tail[-1500:])
                status = 1
            for difference in result.unexplained:
                print("   ", difference.describe())
                status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
