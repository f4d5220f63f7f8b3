"""A headless Jupyter server (``jupyter_server``, what JupyterLab runs on) lists the sandboxed
kernel among its kernelspecs and starts it through its REST API; the kernel it started answers
as the sandboxed one (``%sandbox``, through the connection file the server wrote)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.support import Jupyter, execute, require_kernel_packages, require_provider, text


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _api(base: str, path: str, method: str = "GET", body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base}{path}", data=data, method=method)
    request.add_header("Authorization", "token secret-token")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        payload = response.read()
    return json.loads(payload) if payload else None


@pytest.mark.kernel
def test_jupyter_server_lists_and_starts_the_sandboxed_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_kernel_packages()
    pytest.importorskip("jupyter_server")
    require_provider("landlock")
    jupyter = Jupyter(tmp_path, monkeypatch)
    name = jupyter.install("os-sandbox=landlock\n", "sandboxed-lab")
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_server",
            f"--ServerApp.port={port}",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=secret-token",
            "--ServerApp.allow_root=True",
            "--ServerApp.open_browser=False",
            f"--ServerApp.root_dir={jupyter.work}",
        ],
        cwd=jupyter.work,
        env=jupyter.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                specs = _api(base, "/api/kernelspecs")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.5)
        assert name in specs["kernelspecs"]
        shown = specs["kernelspecs"][name]["spec"]
        assert shown["argv"][1] == "--kernel={connection_file}"
        kernel = _api(base, "/api/kernels", "POST", {"name": name})
        # The server marks a kernel idle once a client has talked to it: this test's client,
        # through the connection file the server wrote (its REST API gives no cell execution).
        connection = tmp_path / "runtime" / f"kernel-{kernel['id']}.json"
        assert connection.exists()
        from jupyter_client import BlockingKernelClient

        client = BlockingKernelClient(connection_file=str(connection))
        client.load_connection_file()
        client.start_channels()
        try:
            # (wait_for_ready would take a kernel still starting for a dead one: no heartbeat
            # yet and no manager to ask; a kernel_info request waits for the kernel instead)
            deadline = time.monotonic() + 120
            while True:
                try:
                    client.kernel_info(reply=True, timeout=10)
                    break
                except TimeoutError:
                    assert time.monotonic() < deadline, "the kernel never answered"
            _reply, outputs = execute(client, "%sandbox")
            assert "sandboxed kernel: rules" in text(outputs)
            assert "os-sandbox=landlock" in text(outputs)
        finally:
            client.stop_channels()
        deadline = time.monotonic() + 60
        while _api(base, f"/api/kernels/{kernel['id']}")["execution_state"] != "idle":
            assert time.monotonic() < deadline, "the server never saw the kernel idle"
            time.sleep(0.5)
        _api(base, f"/api/kernels/{kernel['id']}", "DELETE")
        assert _api(base, "/api/kernels") == []
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
