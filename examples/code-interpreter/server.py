"""A code interpreter for agents: an MCP server whose sessions are sandboxed Jupyter kernels.

Each session is its own kernel, started as ``python-sb --kernel={connection_file}`` under one
rule file (``code-interpreter.py-sandboxes`` next to this file, or ``CODE_INTERPRETER_RULES``)
in a working folder of its own: state is kept between ``run_code`` calls, plots come back as
MCP image content, and the session's files can be listed, read and written. A session unused
for ``CODE_INTERPRETER_IDLE`` seconds (default 600) is ended, its kernel and folder removed.

Tools:

- ``start_session()`` -> the session's id and working folder;
- ``run_code(session_id, code)`` -> what the cell printed and returned (text), its images
  (PNG, as image content) and its error: a refusal names the rule and the line that would
  allow it;
- ``list_files(session_id, path=".")``, ``read_file(session_id, path)``,
  ``write_file(session_id, path, content)``: text files of the working folder only (paths that
  leave it, and symbolic links, are refused: the folder is written by sandboxed code);
- ``end_session(session_id)``.

The server itself is not sandboxed: it holds the sessions and the transport (stdio); the code
runs in the kernels. Needs the ``mcp`` SDK (2.x or 1.x) and python-sb's ``[kernel]`` extra.

    python server.py          # stdio
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ImageContent, TextContent
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.types import ImageContent, TextContent

HERE = Path(__file__).resolve().parent
RULES = Path(os.environ.get("CODE_INTERPRETER_RULES", HERE / "code-interpreter.py-sandboxes"))
IDLE_SECONDS = float(os.environ.get("CODE_INTERPRETER_IDLE", "600"))
ROOT = Path(os.environ.get("CODE_INTERPRETER_ROOT") or tempfile.mkdtemp(prefix="code-interp-"))
CELL_TIMEOUT = float(os.environ.get("CODE_INTERPRETER_TIMEOUT", "120"))
MAX_FILE = 1_000_000  # bytes read_file returns at most
PYTHON_SB = str(Path(sys.executable).with_name("python-sb"))

server = Server("code-interpreter")


def _kernelspecs() -> KernelSpecManager:
    """The kernelspec of every session, as ``python-sb --install-kernel --rules RULES`` writes
    it, in a folder of this server's own (nothing installed in the user's Jupyter)."""

    import json

    folder = ROOT / ".kernels" / "python-sb"
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [PYTHON_SB, "--kernel={connection_file}", f"--pysandboxes-config={RULES}"],
        "display_name": "python-sb code interpreter",
        "language": "python",
        "interrupt_mode": "signal",
    }
    (folder / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(folder.parent)])


SPECS = _kernelspecs()


class Session:
    """One sandboxed kernel and its working folder."""

    def __init__(self, folder: Path, manager: AsyncKernelManager, client: Any) -> None:
        self.folder = folder
        self.manager = manager
        self.client = client
        self.used = time.monotonic()
        self.lock = asyncio.Lock()


SESSIONS: dict[str, Session] = {}


def _session(session_id: str) -> Session:
    found = SESSIONS.get(session_id)
    if found is None:
        raise ToolError(f"no session {session_id!r} (ended, or idle for {IDLE_SECONDS:g} s)")
    found.used = time.monotonic()
    return found


@server.tool()
async def start_session() -> dict[str, str]:
    """Start a Python session (a sandboxed Jupyter kernel) with a working folder of its own."""

    _reaper()
    session_id = uuid.uuid4().hex[:12]
    folder = ROOT / session_id
    folder.mkdir(parents=True)
    manager = AsyncKernelManager(kernel_name="python-sb", kernel_spec_manager=SPECS)
    manager.shutdown_wait_time = 10.0
    await manager.start_kernel(cwd=str(folder), env={**os.environ})
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=120)
    except Exception:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    SESSIONS[session_id] = Session(folder, manager, client)
    return {"session_id": session_id, "working_folder": str(folder)}


@server.tool()
async def run_code(session_id: str, code: str) -> list[TextContent | ImageContent]:
    """Run Python code in the session (variables are kept between calls). Returns its output,
    its result, its images (plots) and its error."""

    session = _session(session_id)
    parts: list[TextContent | ImageContent] = []
    texts: list[str] = []

    def output(message: dict[str, Any]) -> None:
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            texts.append(content["text"])
        elif kind in ("execute_result", "display_data"):
            data = content["data"]
            if "image/png" in data:
                png = data["image/png"]
                parts.append(ImageContent(type="image", data=png, mimeType="image/png"))
            elif "text/plain" in data:
                texts.append(data["text/plain"] + "\n")
        elif kind == "error":
            texts.append(f"{content['ename']}: {content['evalue']}\n")

    async with session.lock:
        reply = await session.client.execute_interactive(
            code, timeout=CELL_TIMEOUT, output_hook=output, allow_stdin=False
        )
    session.used = time.monotonic()
    status = reply["content"]["status"]
    head = "ok" if status == "ok" else "error"
    return [TextContent(type="text", text=f"[{head}]\n" + "".join(texts)), *parts]


def _open_inside(folder: Path, path: str, flags: int) -> int:
    """A descriptor of ``path`` inside ``folder``, following no symbolic link on the way (the
    folder is written by sandboxed code: a link there must not reach the host's files)."""

    parts = [part for part in Path(path).parts if part not in ("", ".")]
    if Path(path).is_absolute() or ".." in parts:
        raise ToolError(f"{path!r}: only paths inside the working folder")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            step = flags if last else os.O_RDONLY | os.O_DIRECTORY
            try:
                child = os.open(part, step | os.O_NOFOLLOW, 0o644, dir_fd=fd)
            except OSError as exc:
                if exc.errno == 40:  # ELOOP: a symbolic link
                    raise ToolError(f"{path!r}: a symbolic link, not followed") from None
                raise ToolError(f"{path!r}: {exc.strerror}") from None
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


@server.tool()
async def list_files(session_id: str, path: str = ".") -> list[str]:
    """The files and folders (ending with '/') of a folder of the session's working folder."""

    session = _session(session_id)
    fd = _open_inside(session.folder, path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        names = []
        for name in sorted(os.listdir(fd)):
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            names.append(name + "/" if stat.S_ISDIR(info.st_mode) else name)
        return names
    finally:
        os.close(fd)


@server.tool()
async def read_file(session_id: str, path: str) -> str:
    """The text of a file of the session's working folder (at most 1 MB of it)."""

    session = _session(session_id)
    fd = _open_inside(session.folder, path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ToolError(f"{path!r} is not a regular file")
        return handle.read(MAX_FILE).decode("utf-8", "replace")


@server.tool()
async def write_file(session_id: str, path: str, content: str) -> str:
    """Write a text file into the session's working folder (the code can then open it)."""

    session = _session(session_id)
    fd = _open_inside(session.folder, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(content)
    return f"wrote {len(content.encode())} bytes to {path}"


@server.tool()
async def end_session(session_id: str) -> str:
    """End the session: its kernel stops and its working folder is removed."""

    await _end(session_id)
    return f"session {session_id} ended"


async def _end(session_id: str) -> None:
    session = SESSIONS.pop(session_id, None)
    if session is None:
        raise ToolError(f"no session {session_id!r}")
    session.client.stop_channels()
    await session.manager.shutdown_kernel(now=False)
    shutil.rmtree(session.folder, ignore_errors=True)


_REAPER: list[asyncio.Task[None]] = []


def _reaper() -> None:
    """Start (once) the task that ends the sessions idle for IDLE_SECONDS."""

    if _REAPER:
        return

    async def reap() -> None:
        while True:
            await asyncio.sleep(min(IDLE_SECONDS / 4, 30))
            now = time.monotonic()
            for session_id, session in list(SESSIONS.items()):
                if now - session.used > IDLE_SECONDS and not session.lock.locked():
                    print(f"code-interpreter: ending idle session {session_id}", file=sys.stderr)
                    await _end(session_id)

    _REAPER.append(asyncio.get_running_loop().create_task(reap()))


def _end_all() -> None:
    """At exit (the client closed the transport): every kernel ends with the server."""

    for session in SESSIONS.values():
        session.client.stop_channels()
        process = getattr(session.manager.provisioner, "process", None)
        if process is not None and process.poll() is None:
            process.terminate()  # python-sb passes SIGTERM on to the kernel
            try:
                process.wait(timeout=10)
            except Exception:
                process.kill()
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    try:
        server.run("stdio")
    finally:
        _end_all()
