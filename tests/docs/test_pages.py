"""Every example of README.md and docs/**/*.md runs, and shows what it prints (issue 26).

The page format is in ``tests/docs/pages.py`` and docs/architecture.md ("Docs as tests"). Each
block is one test, named by its page and line: a page whose example no longer runs, or no
longer prints what the page shows, fails CI. Shell blocks run in a fresh directory holding a
copy of ``examples/`` (and the block's fixture), with ``.venv/bin`` first on ``PATH`` and an
empty ``HOME``; Python blocks run with the test environment's interpreter.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.providers import get_provider
from tests.docs.pages import (
    KINDS,
    SHELL,
    SHOWN,
    Block,
    all_blocks,
    console_steps,
    exactly,
    shown_in,
)
from tests.helpers import PYTHON_SB, REPO, base_env, require

BLOCKS = all_blocks()
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RUN = [b for b in BLOCKS if b.kind in SHELL | {"python"} and "skip" not in b.options]
SKIPPED = [b for b in BLOCKS if "skip" in b.options]
RULES = [b for b in BLOCKS if b.kind == "py-sandboxes"]


def test_every_block_says_what_it_is() -> None:
    """A fence with no kind (or an unknown one) is refused: say console, python, text..."""

    bad = [f"{b.id}: ```{b.kind}" for b in BLOCKS if b.kind not in KINDS]
    assert not bad, "fences without a known kind (see tests/docs/pages.py):\n" + "\n".join(bad)


def test_the_pages_have_examples_to_run() -> None:
    assert len(RUN) >= 10 and len(RULES) >= 5  # the parser still finds the examples


@pytest.mark.parametrize("block", SKIPPED, ids=lambda b: b.id)
def test_a_block_not_run_here_says_why_and_where_it_is(block: Block) -> None:
    """``skip:`` needs a reason; ``covered-by=`` must name a test that exists and holds the
    command (so the example is run, by that test)."""

    reason = block.option("skip") or ""
    assert len(reason.split()) >= 3, f"{block.id}: skip needs a reason"
    for target in block.options.get("covered-by", []):
        path, _, name = target.partition("::")
        source = (REPO / path).read_text(encoding="utf-8")
        assert f"def {name}(" in source, f"{block.id}: {target} does not exist"
        for step in console_steps(block.text) if block.kind in SHELL else []:
            command = step.command.split(" #", 1)[0]  # a comment is not the command
            words = [w for w in command.split() if w.startswith("--") and "=" not in w]
            for word in words[:1]:
                assert word in source, f"{block.id}: {target} does not run {word}"


@pytest.mark.parametrize("block", RULES, ids=lambda b: b.id)
def test_rule_file_blocks_load(block: Block, tmp_path: Path) -> None:
    """A rule file shown on a page is accepted by the loader (paths that do not exist here
    are warnings), and is the repository's file where it says so (``same-as=``)."""

    from pysandboxes.policy import parse_text

    work = workdir(block, tmp_path)
    environ = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}
    try:
        parse_text(
            block.text, str(work / ".py-sandboxes"), environ=environ, cwd=str(work), learned_ok=True
        )
    except ConfigError as exc:
        pytest.fail(f"{block.id}: the rule file does not load:\n{exc}")
    same = block.option("same-as")
    if same:
        real = {_rule(line) for line in (REPO / same).read_text().splitlines()}
        for line in block.text.splitlines():
            if _rule(line):
                assert _rule(line) in real, f"{block.id}: {line!r} is not in {same}"


def _rule(line: str) -> str:
    return line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_example_runs_as_shown(block: Block, tmp_path: Path) -> None:
    for needed in block.options.get("needs", []):
        require(_available(needed), f"os-sandbox={needed} cannot run on this machine")
    work = workdir(block, tmp_path)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = base_env(home, {"PATH": f"{Path(PYTHON_SB).parent}{os.pathsep}/usr/bin:/bin"})
    for pair in block.options.get("env", []):
        name, _, value = pair.partition("=")
        env[name] = value
    if block.kind == "python":
        run_python_block(block, work, env)
    else:
        run_shell_block(block, work, env)


def workdir(block: Block, tmp_path: Path) -> Path:
    """A fresh directory with a copy of examples/ and the block's fixture."""

    work = tmp_path / "work"
    if not work.exists():
        shutil.copytree(REPO / "examples", work / "examples", symlinks=True)
        fixture = block.option("fixture")
        if fixture:
            shutil.copytree(FIXTURES / fixture, work, dirs_exist_ok=True, symlinks=True)
    return work


def run_shell_block(block: Block, work: Path, env: dict[str, str]) -> None:
    steps = console_steps(block.text)
    assert steps, f"{block.id}: no command"
    # One shell for the block (a variable set by one command is seen by the next); a marker
    # line before each command splits the output.
    marker = "\x1epysb-docs-step"
    prompted = any(line.startswith("$ ") for line in block.text.splitlines())
    script = ["exec 2>&1"]
    for index, step in enumerate(steps):
        script.append(f"printf '%s\\n' '{marker} {index}'")
        script.append(step.command)
        if not prompted:  # a plain command list: each command must succeed
            script.append(f"status=$?; [ $status = 0 ] || echo '{marker} failed '$status")
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    outputs = done.stdout.split(f"{marker} ")[1:]
    assert len(outputs) == len(steps), f"{block.id}: the block stopped early:\n{done.stdout}"
    for step, output in zip(steps, outputs, strict=True):
        output = output.split("\n", 1)[1] if "\n" in output else ""
        assert f"{marker} failed" not in output, f"{block.id}: `{step.command}` failed:\n{output}"
        if block.option("match") is not None and block.option("match") == "exact":
            problem = exactly(step.shown, output)
        else:
            problem = shown_in(step.shown, output)
        assert problem is None, f"{block.id}: `{step.command}`: {problem}\noutput:\n{output}"


def _serve() -> Iterator[str]:
    """A local HTTP server standing in for a page the example fetches."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body>a page served by the docs tests' stand-in</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run_python_block(block: Block, work: Path, env: dict[str, str]) -> None:
    source = block.text
    servers = []
    for url in block.options.get("stand-in", []):
        server = _serve()
        local = next(server)
        servers.append(server)
        source = source.replace(url, local)
        env["DOCS_STAND_IN_PORT"] = local.rsplit(":", 1)[1]
    try:
        program = work / "example.py"
        program.write_text(source)
        done = subprocess.run(
            [sys.executable, str(program)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        for server in servers:
            server.close()
    assert done.returncode == 0, f"{block.id}: the example failed:\n{done.stdout}{done.stderr}"


def _available(name: str) -> bool:
    try:
        return bool(get_provider(name).availability())
    except ConfigError:
        return False


def test_shown_blocks_are_not_commands() -> None:
    """A ``text`` block that starts with a ``$ `` prompt is a console block: mark it so, and
    it runs."""

    wrong = [b.id for b in BLOCKS if b.kind in SHOWN and b.text.startswith("$ ")]
    assert not wrong, "text blocks holding $ commands: " + ", ".join(wrong)
