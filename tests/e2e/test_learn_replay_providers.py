"""Learned files replay under every kernel provider (issue 11 deliverable 4).

Every program of the learning tests (``tests/e2e/test_learn.py``'s and
``test_learn_equals_audit.py``'s) is learned once with ``python-sb`` (a new rule file from the
template, which says ``py-sandbox=true`` and ``os-sandbox=${OS_SANDBOX:-...}``), then run again
with the learned file in force under ``landlock``, ``bwrap`` and ``unshare`` (chosen with
``OS_SANDBOX``, the template's documented switch), the Python layer on, and under the Python
layer alone (``subprocess``). Each replay must end as
the learning run did, print the same thing, and be refused nothing: it runs with
``--denials=FILE`` and that file must stay absent, and stderr must hold no refusal.
"""

from __future__ import annotations

import http.server
import re
import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.helpers import base_env, require, run_python, run_sb

PROGRAMS = Path(__file__).resolve().parent / "programs" / "learn"
SALES = "region,amount\nnorth,120.50\nsouth,80.00\nnorth,42.25\neast,310.00\n"
#: The kernel providers, and the Python layer alone (``subprocess``), whose ``--denials`` file
#: shows every refusal the program caught: bwrap and unshare do not let the sandbox append to
#: ``--denials=FILE`` today (the file is not bound in), so under them a refusal the program
#: catches shows only if it changes the status or the output.
PROVIDERS = ("subprocess", "landlock", "bwrap", "unshare")


@dataclass
class Run:
    """What to run: arguments, where, with what, and the rule file learning must write (the
    one the replay will find)."""

    args: list[str]
    cwd: Path
    env: dict[str, str]
    rule_file: Path
    input: str | None = None
    status: int = 0


@dataclass
class Case:
    name: str
    setup: Callable[[Path, Path], Run]  # (tree, home) -> Run
    #: Output differences that are the program's own (a counter, a duration).
    normalise: Callable[[str], str] = lambda text: text
    #: provider -> reason: a known breakage outside learning (a strict xfail, so that the
    #: test says when it is fixed).
    broken: dict[str, str] = field(default_factory=dict)


def copy_program(name: str, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    shutil.copy(PROGRAMS / name, target)
    return target


def report(tree: Path, home: Path, extra: bool = False) -> Run:
    script = copy_program("report.py", home / "skills" / "report" / "scripts")
    work = tree / "work"
    work.mkdir()
    (work / "sales.csv").write_text(SALES)
    args = [str(script), "sales.csv", "report.txt"]
    if extra:
        footer = home / ".config" / "report" / "footer.txt"
        footer.parent.mkdir(parents=True)
        footer.write_text("-- confidential --\n")
        args.append("--extra")
    env = base_env(home, {"REPORT_TITLE": "Quarterly sales"})
    return Run(args, work, env, script.parent / ".py-sandboxes")


def in_project(tree: Path, home: Path, name: str, extra_env: dict[str, str] | None = None) -> Run:
    project = tree / "project"
    script = copy_program(name, project)
    return Run([str(script)], project, base_env(home, extra_env), project / ".py-sandboxes")


def http_sqlite(tree: Path, home: Path) -> Run:
    return in_project(tree, home, "http_sqlite.py")


def use_package(tree: Path, home: Path) -> Run:
    libs = tree / "libs"
    shutil.copytree(PROGRAMS / "libs", libs, ignore=shutil.ignore_patterns("__pycache__"))
    return in_project(tree, home, "use_package.py", {"APP_LIBS": str(libs)})


def temp_threads(tree: Path, home: Path) -> Run:
    return in_project(tree, home, "temp_threads.py")


def until_exit(tree: Path, home: Path) -> Run:
    project = tree / "project"
    script = copy_program("until_signal.py", project / "app")
    (project / "data").mkdir()
    (project / "data" / "in.json").write_text("[1, 2, 3]")
    env = base_env(home, {"UNTIL_NAME": "probe"})
    return Run([str(script), "exit"], project, env, project / "app" / ".py-sandboxes", status=3)


def module_tool(tree: Path, home: Path) -> Run:
    project = tree / "project"
    package = project / "tool"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import json, os\n"
        "with open(os.path.join('data', 'in.json'), encoding='utf-8') as f:\n"
        "    print(sum(json.load(f)))\n"
    )
    (project / "data").mkdir()
    (project / "data" / "in.json").write_text("[1, 2, 3]")
    return Run(["-m", "tool"], project, base_env(home), project / ".py-sandboxes")


def from_stdin(tree: Path, home: Path) -> Run:
    project = tree / "project"
    project.mkdir()
    (project / "notes.txt").write_text("three words here\n")
    program = "import re\nprint(len(re.findall(r'\\w+', open('notes.txt').read())))\n"
    return Run(["-"], project, base_env(home), project / ".py-sandboxes", input=program)


def code_csv_json(tree: Path, home: Path) -> Run:
    project = tree / "project"
    project.mkdir()
    code = "import csv, json; print(json.dumps(csv.list_dialects() != []))"
    return Run(["-c", code], project, base_env(home), project / ".py-sandboxes")


def code_src_package(tree: Path, home: Path) -> Run:
    """-c importing a package from a directory the program puts on sys.path."""

    project = tree / "project"
    (project / "src" / "mypkg").mkdir(parents=True)
    (project / "src" / "mypkg" / "__init__.py").write_text("VALUE = 7\n")
    code = "import sys; sys.path.insert(0, 'src'); import mypkg; print(mypkg.VALUE)"
    return Run(["-c", code], project, base_env(home), project / ".py-sandboxes")


def script(tree: Path, home: Path, text: str, extra_env: dict[str, str] | None = None) -> Run:
    project = tree / "project"
    project.mkdir()
    path = project / "main.py"
    path.write_text(text)
    return Run([str(path)], project, base_env(home, extra_env), project / ".py-sandboxes")


def tabulate_skill(tree: Path, home: Path) -> Run:
    require(find_spec("tabulate"), "tabulate is not installed (pip install -e '.[dev]')")
    return script(tree, home, "from tabulate import tabulate\nprint(tabulate([['a', 1]]))\n")


def pytest_pluggy(tree: Path, home: Path) -> Run:
    return script(tree, home, "import pluggy\nimport pytest\n\nprint(pytest.__name__)\n")


def module_pytest(tree: Path, home: Path) -> Run:
    project = tree / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_small.py").write_text(
        "import json\n\nimport pytest\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_json(n, tmp_path):\n"
        "    path = tmp_path / 'x.json'\n"
        "    path.write_text(json.dumps([n]))\n"
        "    assert json.loads(path.read_text()) == [n]\n\n\n"
        "def test_skipped():\n"
        "    pytest.skip('not here')\n"
    )
    # -p no:cacheprovider and no byte-code: no run leaves a cache behind that a later one would
    # read through a path the learning run never took (pytest reads its rewritten .pyc back
    # with marshal.loads, a python-api call; docs/learning.md, "What learning cannot see").
    # -B, not only PYTHONDONTWRITEBYTECODE: a replay passes only the variables the rules grant,
    # and without it the first replay wrote tests/__pycache__ and the next one under another
    # provider was refused reading it back.
    # And pytest reads the .pyc it rewrote for its plugins in site-packages whenever one is
    # there: a plain run first writes them all, so that no test run elsewhere writing one
    # between the learning run and a replay changes what the replay does.
    env = base_env(home, {"PYTHONDONTWRITEBYTECODE": "1"})
    args = ["-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    warm = run_python(args[1:], cwd=project, env=base_env(home), timeout=600)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    shutil.rmtree(project / "tests" / "__pycache__", ignore_errors=True)
    return Run(args, project, env, project / ".py-sandboxes")


def module_probes(tree: Path, home: Path) -> Run:
    return script(
        tree,
        home,
        "try:\n    import winreg\nexcept ImportError:\n    pass\n"
        "try:\n    import no_such_module_here\nexcept ImportError:\n    pass\n"
        "import gc\n\nprint(gc.isenabled())\n",
    )


def urllib_page(tree: Path, home: Path) -> Run:
    assert PAGE_URL, "the page server fixture is not running"
    text = (
        "import sys\nimport urllib.request\n\n"
        "with urllib.request.urlopen(sys.argv[1], timeout=10) as response:\n"
        "    print(len(response.read()))\n"
    )
    run = script(tree, home, text, {"AWS_SECRET_ACCESS_KEY": "not-for-you", "OTHER": "1"})
    run.args.append(PAGE_URL[0])
    return run


def own_server_fixed_port(tree: Path, home: Path) -> Run:
    """A server on a fixed loopback port and a client of it, in one program."""

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    text = (
        "import socket, threading\n"
        "server = socket.socket()\n"
        "server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        f"server.bind(('127.0.0.1', {port}))\n"
        "server.listen()\n\n\n"
        "def answer():\n"
        "    peer, _ = server.accept()\n"
        "    peer.sendall(b'hello')\n"
        "    peer.close()\n\n\n"
        "threading.Thread(target=answer, daemon=True).start()\n"
        f"client = socket.create_connection(('127.0.0.1', {port}), timeout=10)\n"
        "print(client.recv(5).decode())\n"
    )
    return script(tree, home, text)


CASES = [
    Case("report", report),
    Case("report-extra", lambda tree, home: report(tree, home, extra=True)),
    Case(
        "http-sqlite",
        http_sqlite,
        normalise=lambda text: re.sub(r"\(\d+ stored\)", "(n stored)", text),
    ),
    Case(
        "own-server-fixed-port",
        own_server_fixed_port,
    ),
    Case("use-package", use_package),
    Case("temp-threads", temp_threads),
    Case("until-exit", until_exit),
    Case("m-tool", module_tool),
    Case("stdin", from_stdin),
    Case("c-csv-json", code_csv_json),
    Case("c-src-package", code_src_package),
    Case("tabulate", tabulate_skill),
    Case("pytest-pluggy", pytest_pluggy),
    Case("m-pytest", module_pytest, normalise=lambda text: re.sub(r" in [0-9.]+s", "", text)),
    Case("urllib-page", urllib_page),
    Case("module-probes", module_probes),
]

PAGE_URL: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def page_server() -> Iterator[None]:
    """One local HTTP server for the module: learning and replays fetch the same URL."""

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
    PAGE_URL.append(f"http://127.0.0.1:{server.server_address[1]}/")
    try:
        yield
    finally:
        PAGE_URL.clear()
        server.shutdown()
        server.server_close()


#: name -> (the run, what learning printed): each program is learned once for the module.
LEARNED: dict[str, tuple[Run, str]] = {}


def learned(case: Case, factory: pytest.TempPathFactory) -> tuple[Run, str]:
    if case.name not in LEARNED:
        tree = factory.mktemp(case.name)
        home = tree / "home"
        home.mkdir()
        run = case.setup(tree, home)
        assert not run.rule_file.exists()
        result = run_sb(
            [f"--learn={run.rule_file}", *run.args], cwd=run.cwd, env=run.env, input=run.input
        )
        assert result.returncode == run.status, result.stderr
        text = run.rule_file.read_text()
        assert "py-sandbox=true" in text and "os-sandbox=${OS_SANDBOX:-" in text
        LEARNED[case.name] = (run, result.stdout)
    return LEARNED[case.name]


def provider_ok(name: str) -> None:
    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    require(state.ok, f"os-sandbox={name}: {state.reason} ({state.install_hint})")


@pytest.mark.kernel
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_learned_file_replays_under_the_kernel_provider(
    case: Case,
    provider: str,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> None:
    provider_ok(provider)
    if provider in case.broken:
        request.applymarker(pytest.mark.xfail(reason=case.broken[provider], strict=True))
    run, learned_stdout = learned(case, tmp_path_factory)
    denials = run.rule_file.parent / f"replay-{provider}.jsonl"
    env = {**run.env, "OS_SANDBOX": provider}
    result = run_sb([f"--denials={denials}", *run.args], cwd=run.cwd, env=env, input=run.input)
    refused = denials.read_text() if denials.exists() else ""
    assert result.returncode == run.status, f"replay failed:\n{result.stderr}\n{refused}"
    assert refused == "", f"the replay was refused something:\n{refused}"
    assert "DENIED" not in result.stderr, result.stderr
    assert case.normalise(result.stdout) == case.normalise(learned_stdout)
