"""Whole notebooks executed with nbclient in the sandboxed kernel, against the same notebooks in
a plain ipykernel (the control): a data-analysis notebook with a plot gives the same outputs;
one that reads ``~/.ssh`` and one that opens a socket get refusals naming the rule where plain
Jupyter succeeds. Then one rule file per origin: ``python-sb --notebook --learn`` learns the
analysis notebook's rules, the same notebook runs under them with the same outputs, and a cell
that tries more fails with the rule.

Landlock, bwrap and unshare each run the three notebooks (about 20 s each on two cores); the
learning test runs once (learning applies no kernel layer; the replay is under landlock).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_sb
from tests.kernel.support import Jupyter, plain, require_kernel_packages, require_provider

ANALYSIS = [
    "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.describe().loc['mean']",
    "totals = df.groupby('region')['amount'].sum()\ntotals",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\ntotals.plot.bar(ax=ax)\nplt.show()",
    "df",
    "float(totals.max())",
]


@pytest.fixture
def jupyter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Jupyter:
    require_kernel_packages()
    found = Jupyter(tmp_path, monkeypatch)
    (found.work / "sales.csv").write_text(
        "region,amount\nnorth,10\nsouth,32.5\nnorth,7\neast,12\nsouth,1\n"
    )
    return found


@pytest.fixture
def server() -> Iterator[int]:
    """A local TCP server that greets: the socket notebook's target."""

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"hello from the host")

    threading.Thread(target=serve, daemon=True).start()
    yield int(listener.getsockname()[1])
    listener.close()


def notebook(cells: list[str]) -> Any:
    import nbformat

    made = nbformat.v4.new_notebook()
    made.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return made


def execute(jupyter: Jupyter, cells: list[str], kernel: str) -> list[Any]:
    """The outputs of each cell, executed by nbclient with the kernelspec ``kernel``."""

    from nbclient import NotebookClient

    executed = notebook(cells)
    client = NotebookClient(
        executed,
        kernel_name=kernel,
        timeout=180,
        allow_errors=True,
        resources={"metadata": {"path": str(jupyter.work)}},
    )
    client.execute(cwd=str(jupyter.work), env=dict(jupyter.env))
    return [cell.outputs for cell in executed.cells]


def summary(outputs: list[Any]) -> list[list[tuple[str, ...]]]:
    """What must be the same across kernels: per cell, each output's type and text, PNGs
    by their presence (bytes differ with nothing), errors by their exception name."""

    found = []
    for cell in outputs:
        items: list[tuple[str, ...]] = []
        for output in cell:
            kind = output["output_type"]
            if kind == "error":
                items.append((kind, output["ename"]))
            elif kind == "stream":
                items.append((kind, output["text"]))
            else:
                data = output["data"]
                items.append(
                    (kind, *sorted(data), "" if "image/png" in data else data["text/plain"])
                )
        found.append(items)
    return found


def _rules(provider: str) -> str:
    return f"os-sandbox={provider}\npython-import=pandas, matplotlib, socket\nexpose-ro={{work}}\n"


@pytest.mark.kernel
@pytest.mark.parametrize("provider", ["landlock", "bwrap", "unshare"])
def test_notebooks_give_plain_jupyters_outputs_where_granted_and_refusals_where_not(
    jupyter: Jupyter, provider: str, server: int
) -> None:
    require_provider(provider)
    key = jupyter.home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("PRIVATE KEY\n")
    ssh = [f"print(open({str(key)!r}).read())"]
    net = [
        "import socket\n"
        f"with socket.create_connection(('127.0.0.1', {server}), timeout=10) as s:\n"
        "    print(s.recv(100).decode())"
    ]
    name = jupyter.install(_rules(provider).format(work=jupyter.work))

    plain_analysis = execute(jupyter, ANALYSIS, "plain")
    sandboxed = execute(jupyter, ANALYSIS, name)
    assert summary(sandboxed) == summary(plain_analysis)
    assert not [o for cell in sandboxed for o in cell if o["output_type"] == "error"]
    kinds = {o["output_type"]: o for o in sandboxed[2]}
    assert "image/png" in kinds["display_data"]["data"]
    assert "<table" in sandboxed[3][0]["data"]["text/html"]

    (control,) = execute(jupyter, ssh, "plain")
    assert control[0]["text"].startswith("PRIVATE KEY")
    ((refused,),) = execute(jupyter, ssh, name)
    assert refused["ename"] == "RulePermissionError"
    assert f"add 'expose-ro={key}'" in refused["evalue"]
    assert "PRIVATE KEY" not in plain("".join(refused["traceback"]))

    (control,) = execute(jupyter, net, "plain")
    assert control[0]["text"].startswith("hello from the host")
    ((refused,),) = execute(jupyter, net, name)
    assert refused["ename"] == "RuleConnectionRefusedError"
    assert f"Connection to [127.0.0.1]:{server} DENIED" in refused["evalue"]


@pytest.mark.kernel
def test_learn_a_notebooks_rules_then_run_it_under_them(jupyter: Jupyter) -> None:
    require_provider("landlock")
    import nbformat

    path = jupyter.work / "analysis.ipynb"
    nbformat.write(notebook(ANALYSIS), str(path))
    rules = jupyter.work / "analysis.py-sandboxes"
    learned_run = jupyter.work / "learned.ipynb"
    out = run_sb(
        ["--notebook", str(path), f"--learn={rules}", "--output", str(learned_run)],
        cwd=jupyter.work,
        env=jupyter.env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "5 of 5 code cells ran" in out.stdout
    text = rules.read_text()
    assert "python-import=matplotlib, pandas" in text
    # The kernel's own rules are the launcher's: never learned into the notebook's file.
    assert "|IN" not in text and ".json" not in text and "Thread.start" not in text
    rules_only = [line for line in text.splitlines() if not line.startswith(("#", "include"))]
    assert not [line for line in rules_only if "JPY_" in line or line == "expose-ro=/proc"]
    # IPython's profile and matplotlib's config and font cache live in the private temporary
    # directory: nothing of the home directory is learned.
    assert not [line for line in rules_only if "=~" in line or str(jupyter.home) in line]

    replayed = jupyter.work / "replayed.ipynb"
    env = {**jupyter.env, "OS_SANDBOX": "landlock"}
    out = run_sb(
        ["--notebook", str(path), f"--pysandboxes-config={rules}", "--output", str(replayed)],
        cwd=jupyter.work,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    first = nbformat.read(str(learned_run), 4)
    second = nbformat.read(str(replayed), 4)
    assert summary([c.outputs for c in second.cells]) == summary([c.outputs for c in first.cells])

    key = jupyter.home / ".ssh" / "id_rsa"
    key.parent.mkdir()
    key.write_text("KEY\n")
    more = notebook([*ANALYSIS, f"open({str(key)!r}).read()"])
    nbformat.write(more, str(path))
    out = run_sb(
        ["--notebook", str(path), f"--pysandboxes-config={rules}"],
        cwd=jupyter.work,
        env=env,
        timeout=300,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "cell 6: RulePermissionError: Read access to '~/.ssh/id_rsa' DENIED" in out.stdout
    assert "5 of 6 code cells ran" in out.stdout
