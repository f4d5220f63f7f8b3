"""Learning and audit come from one record (issue 12 deliverable 1, issue 11 point 13).

For each program, ``python-sb --learn`` (into a new file) and ``python-sb --audit`` against an
empty rule file are run on the same work, and must say the same thing:

- every access audit reports is granted by the learned file (judged by the same decision
  functions the guard uses, ``pysandboxes.policy.decide``), or, for a variable whose name looks
  like a secret, written there commented out under the review note;
- every learned rule line is needed by at least one access audit reports (nothing the run did
  not need): the same modules, the same variables, the same functions; each ``expose-*`` and
  ``net=`` line covers at least one reported access.

The programs use what is installed in the test environment (``tabulate`` from the dev extra,
``pytest`` and ``pluggy``), ``-m pytest`` on a small test directory, ``urllib`` fetching one page
with secrets in the environment, probes for modules that do not exist, and a secret read by name.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest

from pysandboxes.policy import load_policy, parse_text
from pysandboxes.policy.decide import (
    api_decision,
    build_environment,
    import_allowed,
    net_decision,
    path_access,
)
from pysandboxes.policy.model import Policy
from tests.helpers import base_env, require, run_sb

SECRETS_AND_OTHERS = {
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    **{f"UNRELATED_{i:02d}": str(i) for i in range(30)},
}


@pytest.fixture
def page_server() -> Iterator[str]:
    """A local HTTP server answering every GET with a small page; its URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<p>one page</p>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def rule_lines(text: str) -> list[str]:
    out = []
    for raw in text.splitlines():
        line = raw.split("  #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def names_of(lines: list[str], key: str) -> set[str]:
    prefix = key + "="
    return {n.strip() for r in lines if r.startswith(prefix) for n in r[len(prefix) :].split(",")}


class Compared:
    """The learned file and the audit report of the same work."""

    def __init__(self, learned_file: Path, denials: list[dict[str, str]], cwd: Path, home: Path):
        self.text = learned_file.read_text()
        self.lines = rule_lines(self.text)
        self.policy: Policy = load_policy(
            str(learned_file), environ={"HOME": str(home)}, cwd=str(cwd), learned_ok=True
        )
        self.denials = denials
        # The file lines left for review (commented out under "Review: secret"), read as rules.
        reviewed = "".join(
            line.removeprefix("# ") + "\n"
            for line in self.text.splitlines()
            if line.startswith(("# expose-ro=", "# expose-rw="))
        )
        self.reviewed: Policy = parse_text(
            reviewed, str(learned_file), environ={"HOME": str(home)}, cwd=str(cwd), learned_ok=True
        )

    def of_kind(self, kind: str) -> list[dict[str, str]]:
        return [d for d in self.denials if d["kind"] == kind]

    def check(self) -> None:
        """Both directions (see the module docstring)."""

        policy = self.policy
        # Modules, variables, functions: the same sets.
        modules = {d["target"] for d in self.of_kind("import")}
        assert names_of(self.lines, "python-import") == modules
        assert all(import_allowed(policy, name) for name in modules)
        reviewed = {d["target"] for d in self.of_kind("env") if "secret" in (d["detail"] or "")}
        granted = {d["target"] for d in self.of_kind("env")} - reviewed
        assert {r.split("=", 1)[0] for r in names_of(self.lines, "env")} == granted
        for name in reviewed:
            assert f"# env={name}=${{{name}}}" in self.text
            assert name not in build_environment(policy, {name: "x"})
        functions = {r.removeprefix("ALLOW:") for r in names_of(self.lines, "python-api")}
        assert functions == {d["target"] for d in self.of_kind("api")}
        for denial in self.of_kind("api"):
            assert api_decision(policy, denial["target"], denial["detail"] or "")[0], denial
        # Files: every reported access granted; every expose line covers one of them.
        # (a place that holds credentials is written commented out, for review: the same
        # lines, uncommented, must grant it)
        files = self.of_kind("file")
        for denial in files:
            write = (denial["detail"] or "").startswith("write")
            wanted = ("rw",) if write else ("ro", "rw")
            if path_access(policy, denial["target"]) not in wanted:
                assert path_access(self.reviewed, denial["target"]) in wanted, denial
        for rule in (*policy.expose_ro, *policy.expose_rw, *self.reviewed.expose_ro):
            assert any(
                (d["target"] + "/").startswith(rule.path.rstrip("/") + "/") for d in files
            ), f"{rule.text} covers nothing audit reported: {files}"
        # Network: every reported access allowed; every net line allows one of them.
        reported = []
        for denial in self.of_kind("net"):
            address, _, port = denial["target"].rpartition(":")
            proto = (denial["suggestion"] or "net=ALLOW|TCP").split("|")[1]
            access = (proto, address.strip("[]"), int(port), denial["detail"])
            reported.append(access)
            assert net_decision(policy, access[0], None, access[1], access[2], access[3])[0]
        for rule in policy.net:
            alone = Policy(net=(rule,))
            assert any(net_decision(alone, p, None, ip, port, d)[0] for p, ip, port, d in reported)


def same_work(output: str) -> str:
    """The output without durations (pytest's summary line)."""

    return re.sub(r" in [0-9.]+s", "", output)


def learn_and_audit(
    args: list[str], *, cwd: Path, home: Path, env: dict[str, str], rule_dir: Path
) -> tuple[Compared, str, str]:
    """Learn into a new file, then audit the same work against an empty rule file."""

    (rule_dir / ".py-sandboxes").write_text("")  # the rule file in use: empty
    target = cwd.parent / "learned.py-sandboxes"
    learn = run_sb([f"--learn={target}", *args], cwd=cwd, env=env)
    assert learn.returncode == 0, learn.stderr
    denials_file = cwd.parent / "audit.jsonl"
    audit = run_sb(["--audit", f"--denials={denials_file}", *args], cwd=cwd, env=env)
    assert audit.returncode == 0, audit.stderr
    assert same_work(learn.stdout) == same_work(audit.stdout)
    denials = [json.loads(line) for line in denials_file.read_text().splitlines()]
    return Compared(target, denials, cwd, home), learn.stderr, audit.stderr


def test_an_installed_package_tabulate(home: Path, project: Path) -> None:
    """The seed's skill: tabulate lives in the environment's site-packages."""

    require(find_spec("tabulate"), "tabulate is not installed (pip install -e '.[dev]')")
    script = project / "t.py"
    script.write_text("from tabulate import tabulate\nprint(tabulate([['a', 1]]))\n")
    compared, _, _ = learn_and_audit(
        [str(script)], cwd=project, home=home, env=base_env(home), rule_dir=project
    )
    compared.check()
    assert "tabulate" in names_of(compared.lines, "python-import")


def test_pytest_and_pluggy_imported_by_a_script(home: Path, project: Path) -> None:
    script = project / "p.py"
    script.write_text("import pluggy\nimport pytest\n\nprint(pytest.__name__, pluggy.__name__)\n")
    compared, _, _ = learn_and_audit(
        [str(script)], cwd=project, home=home, env=base_env(home), rule_dir=project
    )
    compared.check()
    assert {"pytest", "pluggy"} <= names_of(compared.lines, "python-import")


def test_a_test_suite_run_with_m_pytest(home: Path, project: Path) -> None:
    tests = project / "tests"
    tests.mkdir()
    (tests / "test_small.py").write_text(
        "import json\n\nimport pytest\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_json(n, tmp_path):\n"
        "    path = tmp_path / 'x.json'\n"
        "    path.write_text(json.dumps([n]))\n"
        "    assert json.loads(path.read_text()) == [n]\n\n\n"
        "def test_skipped():\n"
        "    pytest.skip('not here')\n"
    )
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    # Both runs alike: no byte-code cache written by the first run for the second to read
    # through marshal (pytest's rewritten modules).
    env = base_env(home, {"PYTHONDONTWRITEBYTECODE": "1"})
    compared, _, _ = learn_and_audit(args, cwd=project, home=home, env=env, rule_dir=project)
    compared.check()
    # pytest's own package (_pytest) is imported by pytest's program code, and HOME is read.
    assert "_pytest" in names_of(compared.lines, "python-import")
    assert "env=HOME=${HOME}" in compared.lines


def test_a_page_fetched_with_urllib_learns_no_variable_it_did_not_read_by_name(
    home: Path, project: Path, page_server: str
) -> None:
    """Issue 11 point 13: urllib scans the environment for *_proxy; nothing of it is granted."""

    script = project / "fetch.py"
    script.write_text(
        "import sys\nimport urllib.request\n\n"
        "with urllib.request.urlopen(sys.argv[1], timeout=10) as response:\n"
        "    print(len(response.read()))\n"
    )
    env = base_env(home, SECRETS_AND_OTHERS)
    compared, _, audit_err = learn_and_audit(
        [str(script), page_server], cwd=project, home=home, env=env, rule_dir=project
    )
    compared.check()
    assert not names_of(compared.lines, "env")  # not one variable granted
    for name in SECRETS_AND_OTHERS:
        assert name not in compared.text  # not even commented out: never read by name
    assert "went through the whole environment" in compared.text
    assert "went through the whole environment" in audit_err


def test_a_secret_read_by_name_is_left_for_review(home: Path, project: Path) -> None:
    script = project / "s.py"
    script.write_text(
        "import os\n\nprint(len(os.environ['API_TOKEN']), os.environ.get('APP_MODE'))\n"
    )
    env = base_env(home, {"API_TOKEN": "t0k3n", "APP_MODE": "fast", "DB_PASSWORD": "pw"})
    compared, learn_err, audit_err = learn_and_audit(
        [str(script)], cwd=project, home=home, env=env, rule_dir=project
    )
    compared.check()
    assert "env=APP_MODE=${APP_MODE}" in compared.lines
    assert "# env=API_TOKEN=${API_TOKEN}" in compared.text
    assert "Review: secret" in compared.text
    assert "API_TOKEN" in learn_err and "looks like a secret" in audit_err
    assert "DB_PASSWORD" not in compared.text  # set, but never read


def test_probes_for_modules_that_do_not_exist(home: Path, project: Path) -> None:
    script = project / "probe.py"
    script.write_text(
        "try:\n    import winreg\nexcept ImportError:\n    pass\n"
        "try:\n    import no_such_module_here\nexcept ImportError:\n    pass\n"
        "import gc\n\nprint(gc.isenabled())\n"
    )
    compared, _, _ = learn_and_audit(
        [str(script)], cwd=project, home=home, env=base_env(home), rule_dir=project
    )
    compared.check()
    assert names_of(compared.lines, "python-import") == {"gc"}


def test_the_import_systems_listing_only_where_a_module_was_found(
    home: Path, project: Path
) -> None:
    """For -c the current directory is on sys.path and is listed on every import: learned and
    reported only when a module of the run came from it (here a package in ./src, put there by
    the program; the listing of ./src is what finds it)."""

    (project / "src" / "mypkg").mkdir(parents=True)
    (project / "src" / "mypkg" / "__init__.py").write_text("VALUE = 7\n")
    plain, _, _ = learn_and_audit(
        ["-c", "import json; print(json.dumps([1]))"],
        cwd=project,
        home=home,
        env=base_env(home),
        rule_dir=project,
    )
    plain.check()
    assert not [r for r in plain.lines if r.startswith("expose-")], plain.lines
    code = "import sys; sys.path.insert(0, 'src'); import mypkg; print(mypkg.VALUE)"
    (project.parent / "learned.py-sandboxes").unlink()
    (project.parent / "audit.jsonl").unlink()
    found, _, _ = learn_and_audit(
        ["-c", code], cwd=project, home=home, env=base_env(home), rule_dir=project
    )
    found.check()
    assert "expose-ro=./src" in found.lines


def test_a_credentials_file_read_is_left_for_review(home: Path, project: Path) -> None:
    """A library reading ~/.aws/credentials (as botocore's credential chain does) learns no
    rule that hands the credentials over; audit says the same."""

    aws = home / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("[default]\naws_secret_access_key = x\n")
    script = project / "c.py"
    script.write_text(
        "import os\n\n"
        "with open(os.path.expanduser('~/.aws/credentials')) as handle:\n"
        "    print(len(handle.read()) > 0)\n"
    )
    compared, learn_err, audit_err = learn_and_audit(
        [str(script)], cwd=project, home=home, env=base_env(home), rule_dir=project
    )
    compared.check()
    assert "# expose-ro=~/.aws" in compared.text
    assert not [r for r in compared.lines if ".aws" in r]
    assert "expose-ro=~/.aws" in learn_err and "looks like a secret" in audit_err


def test_a_file_looked_for_and_not_found(home: Path, project: Path) -> None:
    """A program that looks for a file that does not exist (pdb's ~/.pdbrc) and one that does:
    learning writes a line for the second only, and audit reports the second only (the first
    fails with FileNotFoundError under the rules as without them)."""

    (home / ".present.rc").write_text("x\n")
    script = project / "rc.py"
    script.write_text(
        "import os\n\n"
        "for name in ('~/.pdbrc', '~/.present.rc'):\n"
        "    try:\n"
        "        print(len(open(os.path.expanduser(name)).read()))\n"
        "    except FileNotFoundError:\n"
        "        print('not found')\n"
    )
    compared, _, _ = learn_and_audit(
        [str(script)], cwd=project, home=home, env=base_env(home), rule_dir=project
    )
    compared.check()
    assert "expose-ro=~/.present.rc" in compared.lines
    assert not [line for line in compared.lines if ".pdbrc" in line]
    reported = [d["target"] for d in compared.of_kind("file")]
    assert str(home / ".present.rc") in reported
    assert not [path for path in reported if ".pdbrc" in path]
