"""Shared by the kernel tests: a private Jupyter installation (its data, runtime and config
directories in the test's temporary directory), the sandboxed kernelspec installed there by the
real ``python-sb --install-kernel``, a plain ipykernel kernelspec beside it (the control), and a
real ``jupyter_client.KernelManager`` started from either."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import base_env, require, require_tool, run_sb

PROVIDERS = ("landlock", "bwrap", "unshare", "subprocess")


def require_kernel_packages() -> None:
    for name in ("ipykernel", "jupyter_client", "nbclient", "nbformat", "matplotlib", "pandas"):
        require(
            importlib.util.find_spec(name) is not None,
            f"{name} is not installed (pip install -e '.[kernel]', scripts/setup.sh)",
        )


def require_provider(provider: str) -> None:
    if provider == "bwrap":
        require_tool("bwrap", "bubblewrap")
    if provider in ("bwrap", "unshare"):
        require_tool("pasta", "passt")
        require_tool("nft", "nftables")
    from pysandboxes.providers import get_provider

    available = get_provider(provider).availability()
    require(available.ok, f"os-sandbox={provider} cannot run here: {available.reason}")


class Jupyter:
    """A private Jupyter installation under ``root`` (see the module docstring)."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.home = root / "home"
        self.work = root / "work"
        for folder in (self.home, self.work, root / "data", root / "runtime", root / "config"):
            folder.mkdir(parents=True, exist_ok=True)
        self.env = base_env(
            self.home,
            {
                "JUPYTER_DATA_DIR": str(root / "data"),
                "JUPYTER_PATH": str(root / "data"),
                "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
                "JUPYTER_CONFIG_DIR": str(root / "config"),
                "JUPYTER_PLATFORM_DIRS": "1",
            },
        )
        for name, value in self.env.items():  # this process's jupyter_client reads them too
            monkeypatch.setenv(name, value)
        plain = root / "data" / "kernels" / "plain"
        plain.mkdir(parents=True)
        spec = {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "plain ipykernel",
            "language": "python",
            "interrupt_mode": "signal",
        }
        (plain / "kernel.json").write_text(json.dumps(spec))

    def install(self, rules: str, name: str = "sandboxed") -> str:
        path = self.root / f"{name}.py-sandboxes"
        path.write_text(rules)
        out = run_sb(
            ["--install-kernel", "--rules", str(path), "--name", name, "--user"],
            cwd=self.work,
            env=self.env,
        )
        assert out.returncode == 0, out.stderr
        return name

    @contextmanager
    def kernel(self, name: str) -> Iterator[tuple[Any, Any]]:
        """A started kernel of the kernelspec ``name``: (manager, ready client)."""

        from jupyter_client.manager import KernelManager

        manager = KernelManager(kernel_name=name)
        manager.shutdown_wait_time = 30.0
        manager.start_kernel(cwd=str(self.work), env=dict(self.env))
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=120)
            yield manager, client
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=False)


def execute(client: Any, code: str, timeout: float = 120) -> tuple[dict[str, Any], list[Any]]:
    """Run ``code``; (the execute_reply's content, the IOPub outputs as (type, content))."""

    outputs: list[Any] = []

    def hook(message: dict[str, Any]) -> None:
        kind = message["msg_type"]
        if kind in ("stream", "execute_result", "display_data", "error"):
            outputs.append((kind, message["content"]))

    reply = client.execute_interactive(code, timeout=timeout, output_hook=hook)
    return reply["content"], outputs


def errors(outputs: list[Any]) -> list[dict[str, Any]]:
    return [content for kind, content in outputs if kind == "error"]


def text(outputs: list[Any]) -> str:
    parts = []
    for kind, content in outputs:
        if kind == "stream":
            parts.append(content["text"])
        elif kind in ("execute_result", "display_data"):
            parts.append(content["data"].get("text/plain", ""))
    return "".join(parts)


def plain(shown: str) -> str:
    """``shown`` without terminal colour sequences (IPython colours tracebacks)."""

    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", shown)
