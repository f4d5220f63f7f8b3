"""The code interpreter of ``examples/code-interpreter/``: its MCP server driven by the ``mcp``
SDK's own client over stdio (sessions with state, images as image content, the working
folder's files, refusals naming the rule, idle sessions ended), and the same server used as the
tool set of an agent framework (the OpenAI Agents SDK, with a scripted model)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, base_env, require
from tests.kernel.support import require_kernel_packages, require_provider

EXAMPLE = REPO / "examples" / "code-interpreter"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    return base_env(
        tmp_path / "home",
        {"CODE_INTERPRETER_ROOT": str(tmp_path / "sessions"), "OS_SANDBOX": "landlock", **extra},
    )


def _texts(result: Any) -> str:
    return "".join(getattr(item, "text", "") for item in result.content or [])


def _is_error(result: Any) -> bool:
    found = getattr(result, "is_error", None)
    return bool(found if found is not None else getattr(result, "isError", False))


async def _drive(env: dict[str, str], script: Any) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=[str(EXAMPLE / "server.py")], env=env, cwd=str(EXAMPLE)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await script(session)


def _requirements() -> None:
    require_kernel_packages()
    pytest.importorskip("mcp")
    require_provider("landlock")


@pytest.mark.kernel
def test_sessions_keep_state_return_images_and_files_and_refusals(tmp_path: Path) -> None:
    _requirements()

    async def script(session: Any) -> dict[str, Any]:
        found: dict[str, Any] = {}
        listed = await session.list_tools()
        found["tools"] = sorted(tool.name for tool in listed.tools)
        started = await session.call_tool("start_session", {})
        info = json.loads(_texts(started))
        sid, folder = info["session_id"], Path(info["working_folder"])
        other = json.loads(_texts(await session.call_tool("start_session", {})))

        async def run(code: str, which: str = sid) -> Any:
            return await session.call_tool("run_code", {"session_id": which, "code": code})

        await run("x = 21")
        found["state"] = _texts(await run("x * 2"))
        found["isolated"] = _texts(await run("x", other["session_id"]))
        wrote = await session.call_tool(
            "write_file", {"session_id": sid, "path": "data.csv", "content": "a,b\n1,2\n3,4\n"}
        )
        found["wrote"] = _texts(wrote)
        found["pandas"] = _texts(
            await run("import pandas as pd\ndf = pd.read_csv('data.csv')\nint(df.b.sum())")
        )
        plot = await run(
            "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot(df.a, df.b)\n"
            "fig.savefig('plot.png')\nplt.show()"
        )
        found["images"] = [
            (item.type, base64.b64decode(item.data)[:4])
            for item in plot.content
            if item.type == "image"
        ]
        found["files"] = _texts(await session.call_tool("list_files", {"session_id": sid}))
        await run("open('notes.txt', 'w').write('from the sandbox')")
        read = await session.call_tool("read_file", {"session_id": sid, "path": "notes.txt"})
        found["read"] = _texts(read)
        found["refused"] = _texts(await run("open('/etc/passwd').read()"))
        found["network"] = _texts(await run("import socket"))
        os.symlink("/etc/passwd", folder / "link")  # as code with a kernel layer only could
        found["link"] = await session.call_tool("read_file", {"session_id": sid, "path": "link"})
        found["escape"] = await session.call_tool(
            "read_file", {"session_id": sid, "path": "../" + other["session_id"] + "/x"}
        )
        await session.call_tool("end_session", {"session_id": sid})
        found["ended"] = await run("x")
        found["folder_removed"] = not folder.exists()
        return found

    found = asyncio.run(_drive(_env(tmp_path), script))
    assert found["tools"] == [
        "end_session",
        "list_files",
        "read_file",
        "run_code",
        "start_session",
        "write_file",
    ]
    assert found["state"] == "[ok]\n42\n"
    assert "NameError" in found["isolated"]  # each session its own kernel
    assert "wrote" in found["wrote"] and found["pandas"] == "[ok]\n6\n"
    assert found["images"] == [("image", b"\x89PNG")]
    assert "data.csv" in found["files"] and "plot.png" in found["files"]
    assert found["read"] == "from the sandbox"
    assert "RulePermissionError" in found["refused"] and "expose-ro=/etc/passwd" in found["refused"]
    assert "Module named 'socket' is not allowed by a rule" in found["network"]
    assert _is_error(found["link"]) and "symbolic link" in _texts(found["link"])
    assert "root:" not in _texts(found["link"])
    assert _is_error(found["escape"]) and "inside the working folder" in _texts(found["escape"])
    assert _is_error(found["ended"]) and "no session" in _texts(found["ended"])
    assert found["folder_removed"]


@pytest.mark.kernel
def test_an_idle_session_is_ended(tmp_path: Path) -> None:
    _requirements()

    async def script(session: Any) -> Any:
        info = json.loads(_texts(await session.call_tool("start_session", {})))
        await asyncio.sleep(8)  # idle for 2 s: the reaper looks every 0.5 s
        return await session.call_tool(
            "run_code", {"session_id": info["session_id"], "code": "1"}
        ), Path(info["working_folder"])

    result, folder = asyncio.run(_drive(_env(tmp_path, CODE_INTERPRETER_IDLE="2"), script))
    assert _is_error(result) and "no session" in _texts(result)
    assert not folder.exists()


@pytest.mark.kernel
def test_the_interpreter_is_the_tool_set_of_an_openai_agents_sdk_agent(tmp_path: Path) -> None:
    _requirements()
    require(
        __import__("importlib.util").util.find_spec("agents") is not None,
        "the OpenAI Agents SDK is not installed (pip install -e '.[agents]')",
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, str(EXAMPLE / "agent_openai.py")],
        cwd=str(EXAMPLE),
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert '"session_id"' in out.stdout
    assert "[ok]\n42" in out.stdout.replace("\\n", "\n")
    assert "Read access to '/etc/passwd' DENIED" in out.stdout
    assert out.stdout.splitlines()[-1] == "final: the answer is 42"
