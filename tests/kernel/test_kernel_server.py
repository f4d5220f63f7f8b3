"""A headless Jupyter server (``jupyter_server``, what JupyterLab runs on) lists the sandboxed
kernel among its kernelspecs and starts it through its REST API; the kernel it started answers
as the sandboxed one (``%sandbox``, through the connection file the server wrote)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.support import Jupyter, require_kernel_packages, require_provider, text


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


def _message(msg_type: str, content: dict[str, Any], session: str) -> dict[str, Any]:
    header = {
        "msg_id": uuid.uuid4().hex,
        "msg_type": msg_type,
        "session": session,
        "username": "test",
        "date": "",
        "version": "5.3",
    }
    return {
        "header": header,
        "parent_header": {},
        "metadata": {},
        "content": content,
        "channel": "shell",
        "buffers": [],
    }


async def _run_cell(base: str, kernel_id: str, code: str) -> list[Any]:
    """Run ``code`` in the kernel through the server's websocket, as JupyterLab does; the
    IOPub outputs as (type, content).

    Not a second ZMQ client on the server's connection file: such a client's IOPub
    subscription may not have reached the kernel when its first request is answered (ZMQ's
    late joiner), so the outputs of that request are lost (empty outputs, or a wait for an
    idle status that was published before it subscribed), with plain ipykernel as well. The
    server's channel handler "nudges" the kernel (kernel_info until IOPub answers) before it
    passes a message on. The first request here is a kernel_info as well, answered when the
    kernel has started; each reply is awaited with a deadline no loaded machine reaches."""

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    session = uuid.uuid4().hex
    url = f"ws{base.removeprefix('http')}/api/kernels/{kernel_id}/channels?session_id={session}"
    request = HTTPRequest(url, headers={"Authorization": "token secret-token"})
    socket_ = await asyncio.wait_for(websocket_connect(request), timeout=300)
    try:

        async def exchange(msg_type: str, content: dict[str, Any]) -> list[Any]:
            message = _message(msg_type, content, session)
            await socket_.write_message(json.dumps(message))
            outputs: list[Any] = []
            replied = idle = False
            while not (replied and idle):
                raw = await asyncio.wait_for(socket_.read_message(), timeout=300)
                assert raw is not None, "the server closed the kernel's websocket"
                answer = json.loads(raw)
                if answer["parent_header"].get("msg_id") != message["header"]["msg_id"]:
                    continue
                kind = answer["msg_type"]
                if answer["channel"] == "shell" and kind.endswith("_reply"):
                    replied = True
                elif kind == "status":
                    idle = idle or answer["content"]["execution_state"] == "idle"
                elif kind in ("stream", "execute_result", "display_data", "error"):
                    outputs.append((kind, answer["content"]))
            return outputs

        await exchange("kernel_info_request", {})
        return await exchange(
            "execute_request",
            {"code": code, "silent": False, "store_history": True, "allow_stdin": False},
        )
    finally:
        socket_.close()


@pytest.mark.kernel
@pytest.mark.timeout(900)  # a kernel start and two websocket exchanges, each with 300 s
def test_jupyter_server_lists_and_starts_the_sandboxed_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_kernel_packages()
    pytest.importorskip("jupyter_server")
    require_provider("landlock")
    jupyter = Jupyter(tmp_path, monkeypatch)
    name = jupyter.install("os-sandbox=landlock\n", "sandboxed-lab")
    port = _free_port()
    log = tmp_path / "server.log"  # a file, not a pipe nobody reads (it would fill and block)
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
        stderr=log.open("w"),
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
        assert (tmp_path / "runtime" / f"kernel-{kernel['id']}.json").exists()
        outputs = asyncio.run(_run_cell(base, kernel["id"], "%sandbox"))
        assert "sandboxed kernel: rules" in text(outputs)
        assert "os-sandbox=landlock" in text(outputs)
        deadline = time.monotonic() + 300
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
        print(log.read_text(errors="replace"))  # shown when the test fails
