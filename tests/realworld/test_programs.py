"""Small programs using popular installed packages, learned then replayed everywhere; the seed's
``tabulate`` skill; and the CI case (a hand-written ``ci.py-sandboxes`` extended by learning).

Each program runs once under plain python (the control), is learned into a new rule file, the
file is locked (``learn=false``) and the program replayed under ``subprocess``, ``landlock``,
``bwrap`` and ``unshare`` with the Python layer on: same status and output as the control, no
refusal. The packages come from the dev extra (``pip install -e '.[dev]'``).
"""

from __future__ import annotations

import http.server
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.helpers import require, run_sb
from tests.realworld import harness

PROGRAMS = Path(__file__).resolve().parent / "programs"
SALES = "region,amount\nnorth,120.50\nsouth,80.00\nnorth,42.25\neast,310.00\n"


@dataclass
class Run:
    args: list[str]
    cwd: Path
    rule_file: Path
    env: dict[str, str] = field(default_factory=dict)
    #: Variables the program reads by name: the learned file must grant them.
    reads: set[str] = field(default_factory=set)
    network: bool = False


@dataclass
class Case:
    name: str
    package: str
    setup: Callable[[Path, Path], Run]  # (tree, home) -> Run
    #: The imports the learned file must grant.
    imports: set[str] = field(default_factory=set)


def in_project(tree: Path, program: str) -> Path:
    project = tree / "project"
    project.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / program, project / program)
    return project


PAGE: list[str] = []


def _below_the_ephemeral_range(
    handler: type[http.server.BaseHTTPRequestHandler],
) -> http.server.HTTPServer:
    """A server on a free loopback port below the kernel's ephemeral range, as a real service
    has: learning widens a loopback port inside that range when the run also bound a port 0
    (see ``test_a_probe_bind_is_not_a_server``)."""

    for port in range(20080, 20480):
        try:
            return http.server.HTTPServer(("127.0.0.1", port), handler)
        except OSError:
            continue
    raise AssertionError("no free loopback port in 20080-20479")


@pytest.fixture(scope="module", autouse=True)
def page_server() -> Iterator[None]:
    """A local HTTP server (in the test process, on loopback) for the HTTP client."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"hello from the local server\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = _below_the_ephemeral_range(Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    PAGE.append(f"http://127.0.0.1:{server.server_address[1]}/")
    try:
        yield
    finally:
        PAGE.clear()
        server.shutdown()
        server.server_close()


def http_requests(tree: Path, home: Path) -> Run:
    project = in_project(tree, "http_requests.py")
    return Run(["http_requests.py", PAGE[0]], project, project / ".py-sandboxes", network=True)


def cli_click(tree: Path, home: Path) -> Run:
    project = in_project(tree, "cli_click.py")
    (project / "out").mkdir()
    args = ["cli_click.py", "--count", "2", "out/greetings.txt"]
    env = {"GREET_NAME": "reviewer"}
    return Run(args, project, project / ".py-sandboxes", env, reads={"GREET_NAME"})


def yaml_toml(tree: Path, home: Path) -> Run:
    project = in_project(tree, "yaml_toml.py")
    (project / "config.yaml").write_text("debug: false\nworkers: 4\nnames: [a, b]\n")
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "1.0"\n')
    (project / "build").mkdir()
    return Run(["yaml_toml.py"], project, project / ".py-sandboxes")


def jinja_render(tree: Path, home: Path) -> Run:
    project = in_project(tree, "jinja_render.py")
    templates = project / "templates"
    templates.mkdir()
    (templates / "base.html").write_text(
        "<html><title>{{ title }}</title><body>{% block body %}{% endblock %}</body></html>\n"
    )
    (templates / "page.html").write_text(
        '{% extends "base.html" %}{% block body %}<ul>\n'
        "{% for item in items %}<li>{{ item.name }}: {{ '%.2f' % item.amount }}</li>\n"
        "{% endfor %}</ul>{% endblock %}\n"
    )
    return Run(["jinja_render.py"], project, project / ".py-sandboxes")


def sqlalchemy_sqlite(tree: Path, home: Path) -> Run:
    project = in_project(tree, "sqlalchemy_sqlite.py")
    (project / "data").mkdir()
    return Run(["sqlalchemy_sqlite.py"], project, project / ".py-sandboxes")


def report_skill(tree: Path, home: Path) -> Run:
    """The seed's skill: a script under ~/skills, run from a work directory, its rules next to
    it (``--learn=~/skills/report/scripts/.py-sandboxes``)."""

    scripts = home / "skills" / "report" / "scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "report_skill.py", scripts / "report.py")
    work = tree / "work"
    work.mkdir(parents=True)
    (work / "sales.csv").write_text(SALES)
    return Run([str(scripts / "report.py"), "sales.csv"], work, scripts / ".py-sandboxes")


CASES = [
    Case("http-requests", "requests", http_requests, {"requests"}),
    Case("cli-click", "click", cli_click, {"click"}),
    Case("yaml-toml", "yaml", yaml_toml, {"yaml", "tomllib"}),
    Case("jinja2", "jinja2", jinja_render, {"jinja2"}),
    Case("sqlalchemy-sqlite", "sqlalchemy", sqlalchemy_sqlite, {"sqlalchemy"}),
    Case("tabulate-skill", "tabulate", report_skill, {"tabulate", "csv"}),
]


def replay_everywhere(
    args: list[str], cwd: Path, env: dict[str, str], status: int, tmp: Path
) -> list[harness.Replay]:
    """Replays under every provider; skipped (failed under REQUIRE_ALL) when one is missing."""

    runs = []
    for provider in harness.PROVIDERS:
        unavailable = harness.provider_available(provider)
        require(unavailable is None, str(unavailable))
        runs.append(harness.replay(provider, args, cwd, env, tmp / f"denials-{provider}.jsonl"))
    return runs


@pytest.mark.timeout(300)  # six runs of the program
@pytest.mark.kernel
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_program_using_a_popular_package_learns_and_replays(
    case: Case, tmp_path: Path, home: Path
) -> None:
    require(find_spec(case.package), f"{case.package} is not installed (pip install -e '.[dev]')")
    control = case.setup(tmp_path / "control", home)
    status, expected = harness.plain(control.args, control.cwd, harness.run_env(home, control.env))
    assert status == 0, expected

    run = case.setup(tmp_path / "learned", home)
    env = harness.run_env(home, run.env)
    learned_out, rules = harness.learn(run.args, run.cwd, env, run.rule_file)
    assert learned_out == expected.replace(str(tmp_path / "control"), str(tmp_path / "learned"))
    harness.check_reviewable(rules, env, network=run.network)
    assert run.reads <= rules.env_names(), rules.text
    missing = case.imports - rules.imports()
    assert not missing, f"imports not learned: {missing}\n{rules.text}"
    if run.network:  # the one address and port it used, nothing wider
        port = PAGE[0].rsplit(":", 1)[1].rstrip("/")
        out = [rule for rule in rules.values("net") if rule.endswith("|OUT")]
        assert out == [f"ALLOW|TCP|127.0.0.1|{port}|OUT"], rules.text

    problems = []
    for replayed in replay_everywhere(run.args, run.cwd, env, status, tmp_path):
        if replayed.returncode != status or replayed.refused:
            problems.append(f"{replayed.provider}: {replayed.refused}\n{replayed.stderr}")
        elif replayed.stdout != learned_out:
            problems.append(f"{replayed.provider}: {replayed.stdout!r} != {learned_out!r}")
    assert not problems, "\n".join(problems) + "\n" + rules.text


#: A CI job's rule file, written by hand: the project read-only, its secrets hidden.
CI_RULES = """\
# Rules of the test job (reviewed). Learning appends what the suite needs below.
py-sandbox=true
os-sandbox=${OS_SANDBOX:-landlock}
expose-ro=.
ignore=.env
"""


@pytest.mark.kernel
@pytest.mark.timeout(600)  # six runs of a whole suite on a loaded machine
@pytest.mark.slow
def test_the_ci_case_learns_into_its_own_rule_file_and_replays(tmp_path: Path, home: Path) -> None:
    """``python-sb --pysandboxes-config=ci.py-sandboxes -m pytest`` on a small real project: the
    hand-written lines stay byte for byte, learning appends its block, the locked file replays
    under every provider with the control's counts."""

    source = harness.unpack("inflection", tmp_path / "sdist")
    control = shutil.copytree(source, tmp_path / "control")
    tree = shutil.copytree(source, tmp_path / "ci")
    (tree / ".env").write_text("API_TOKEN=do-not-read\n")
    rules_file = tree / "ci.py-sandboxes"
    rules_file.write_text(CI_RULES)
    env = harness.run_env(home)
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no", "test_inflection.py"]
    status, output = harness.plain(args, control, env)
    expected = harness.pytest_counts(output)

    config = f"--pysandboxes-config={rules_file.name}"
    learning = run_sb([config, "--learn", *args], cwd=tree, env=env, timeout=240)
    assert learning.returncode == status, learning.stderr
    assert harness.pytest_counts(learning.stdout) == expected
    text = rules_file.read_text()
    assert text.startswith(CI_RULES), text
    assert "# --- learned " in text and "python-import=" in text, text
    assert list(tree.glob("ci.py-sandboxes.*.bak")), "no backup of the hand-written file"
    rules = harness.Rules(text)
    harness.check_reviewable(rules, env)
    assert "inflection" in rules.imports(), text
    rules_file.write_text(text + "learn=false\n")

    for replayed in replay_everywhere([config, *args], tree, env, status, tmp_path):
        assert replayed.returncode == status, replayed.stderr
        assert replayed.refused == [], replayed.refused
        assert harness.pytest_counts(replayed.stdout) == expected, replayed.stdout
