"""The sandboxed kernel driven as a front-end drives it: ``jupyter_client.KernelManager`` started
from the kernelspec that ``python-sb --install-kernel`` wrote, in a private Jupyter directory.

Landlock runs everything (the default provider of a generated rule file); bwrap, unshare and
subprocess run the session test (state between cells, a refusal as the cell's error, the
banner), an interrupt and a restart. Each kernel start costs about a second (two or three on a
loaded machine); the whole file about a minute on two cores.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from tests.kernel.support import (
    PROVIDERS,
    Jupyter,
    errors,
    execute,
    plain,
    require_kernel_packages,
    require_provider,
    text,
)


@pytest.fixture
def jupyter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Jupyter:
    require_kernel_packages()
    return Jupyter(tmp_path, monkeypatch)


def _rules(provider: str, extra: str = "") -> str:
    return f"os-sandbox={provider}\npython-import=time\n{extra}"


@pytest.mark.kernel
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_session_keeps_state_and_a_refusal_is_the_cells_error(
    jupyter: Jupyter, provider: str
) -> None:
    require_provider(provider)
    secret = jupyter.home / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("KEY\n")
    name = jupyter.install(_rules(provider))
    with jupyter.kernel(name) as (_manager, client):
        info = client.kernel_info(reply=True)["content"]
        assert f"os-sandbox={provider}" in info["banner"]
        assert "sandboxed.py-sandboxes" in info["banner"]
        reply, outputs = execute(client, "x = 40")
        assert reply["status"] == "ok"
        reply, outputs = execute(client, "x + 2")
        assert reply["status"] == "ok" and text(outputs) == "42"
        reply, outputs = execute(client, f"open({str(secret)!r}).read()")
        assert reply["status"] == "error"
        assert reply["ename"] == "RulePermissionError"
        assert f"expose-ro={secret}" in reply["evalue"]  # the line that would allow it
        (error,) = errors(outputs)
        shown = plain("\n".join(error["traceback"]))
        assert "Cell In[3]" in shown and "site-packages" not in shown  # the cell's frames only
        reply, outputs = execute(client, "%sandbox")
        assert f"os-sandbox={provider}" in text(outputs)
        reply, _ = execute(client, "import socket")
        assert reply["ename"] == "RuleModuleNotFoundError"
        assert "'socket' is not allowed by a rule" in reply["evalue"]


@pytest.mark.kernel
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_interrupt_stops_the_running_cell_and_a_restart_is_a_fresh_sandbox(
    jupyter: Jupyter, provider: str
) -> None:
    require_provider(provider)
    name = jupyter.install(_rules(provider))
    with jupyter.kernel(name) as (manager, client):
        execute(client, "kept = 1")
        started: list[float] = []

        def interrupt_when_running() -> None:
            deadline = time.monotonic() + 60
            while not started and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            manager.interrupt_kernel()

        threading.Thread(target=interrupt_when_running, daemon=True).start()
        code = "import time\nprint('running', flush=True)\nfor _ in range(600): time.sleep(0.1)"

        def hook(message: dict[str, object]) -> None:
            if message["msg_type"] == "stream":
                started.append(time.monotonic())

        reply = client.execute_interactive(code, timeout=120, output_hook=hook)["content"]
        assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
        reply, outputs = execute(client, "kept")
        assert text(outputs) == "1"  # the kernel lives on after the interrupt
        # New ports (the connection file rewritten, so the new sandbox is granted the new
        # ones): with the same ports, a kernel another test worker starts meanwhile may take a
        # port in the moment between the old kernel's end and the new one's bind.
        manager.restart_kernel(now=False, newports=True)
        client.wait_for_ready(timeout=120)
        reply, _ = execute(client, "kept")
        assert reply["ename"] == "NameError"  # a new interpreter, a new sandbox
        reply, outputs = execute(client, "1 + 1")
        assert text(outputs) == "2"


@pytest.mark.kernel
def test_shell_commands_and_pip_are_refused_naming_the_rule(jupyter: Jupyter) -> None:
    require_provider("landlock")
    name = jupyter.install(_rules("landlock", "python-import=os\n"))
    with jupyter.kernel(name) as (_manager, client):
        for code in ("!ls /", "%pip list", "%%bash\nls /\n", "import os\nos.system('ls')"):
            reply, _ = execute(client, code)
            assert reply["status"] == "error", code
            assert reply["ename"] == "RuleApiPermissionError", code
            assert "python-api=ALLOW:process-exec" in reply["evalue"], code


@pytest.mark.kernel
def test_the_connection_file_is_readable_and_nothing_else_of_the_front_ends(
    jupyter: Jupyter,
) -> None:
    """Another kernel's connection file (its HMAC key) sits next to this kernel's own: the cell
    reads its own and is refused the other. Control: a plain ipykernel reads both."""

    require_provider("landlock")
    runtime = jupyter.root / "runtime"
    other = runtime / "kernel-other.json"
    other.write_text('{"key": "the other kernel\'s key"}')
    name = jupyter.install(_rules("landlock"))
    read_own = "import sys\nopen(sys.argv[sys.argv.index('-f') + 1]).read()[:1]"
    read_other = f"open({str(other)!r}).read()"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    bind = (
        f"import socket\ns = socket.socket()\ns.bind(('127.0.0.1', {port}))\ns.listen()\ns.close()"
    )
    with jupyter.kernel(name) as (_manager, client):
        reply, outputs = execute(client, read_own)
        assert reply["status"] == "ok" and text(outputs) == "'{'"
        reply, _ = execute(client, read_other)
        assert reply["ename"] == "RulePermissionError"
    with jupyter.kernel("plain") as (_manager, client):
        reply, outputs = execute(client, read_other)
        assert reply["status"] == "ok" and "the other kernel" in text(outputs)
        assert execute(client, bind)[0]["status"] == "ok"
    name = jupyter.install(_rules("landlock", "python-import=socket\n"), "with-socket")
    with jupyter.kernel(name) as (_manager, client):
        reply, _ = execute(client, bind)  # a port beyond the kernel's five
        assert reply["status"] == "error"
        assert reply["ename"] == "RuleConnectionRefusedError", reply
        assert f"Bind to [127.0.0.1]:{port} DENIED" in reply["evalue"]


@pytest.mark.kernel
def test_rich_outputs_come_back_as_display_data(jupyter: Jupyter) -> None:
    require_provider("landlock")
    rules = _rules("landlock", "python-import=matplotlib,pandas,IPython,io\n")
    rules += "python-api=ALLOW:ctypes.CDLL\n"
    name = jupyter.install(rules)
    with jupyter.kernel(name) as (_manager, client):
        reply, outputs = execute(
            client,
            "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
            "ax.plot([1, 2, 3], [1, 4, 9])\nplt.show()",
        )
        assert reply["status"] == "ok", reply
        (png,) = [c for kind, c in outputs if kind == "display_data" and "image/png" in c["data"]]
        import base64

        assert base64.b64decode(png["data"]["image/png"]).startswith(b"\x89PNG")
        reply, outputs = execute(client, "import pandas as pd\npd.DataFrame({'a': [1, 2]})")
        assert reply["status"] == "ok", reply
        (table,) = [c for kind, c in outputs if kind == "execute_result"]
        assert "<table" in table["data"]["text/html"]
        reply, outputs = execute(
            client,
            "import io\nfrom IPython.display import Image, display\nbuf = io.BytesIO()\n"
            "fig.savefig(buf, format='png')\ndisplay(Image(buf.getvalue()))",
        )
        assert reply["status"] == "ok", reply
        assert [c for kind, c in outputs if kind == "display_data" and "image/png" in c["data"]]
