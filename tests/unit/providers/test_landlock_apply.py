"""Applying Landlock plans to a real process (a plain ``python -c`` child), on this kernel.

Each test starts a child that builds a plan, applies it to itself and then attempts accesses;
the child prints what happened as JSON. Older ABI versions are exercised by building the plan
for a lower ABI than the kernel's (what an older kernel would get from the negotiation).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.providers import landlock as ll
from tests.helpers import PYTHON, require

pytestmark = pytest.mark.kernel

CHILD = textwrap.dedent(
    """
    import errno, json, os, socket, subprocess, sys
    from pysandboxes.errors import ConfigError
    from pysandboxes.policy import parse_text
    from pysandboxes.providers import landlock as ll
    args = json.loads(sys.argv[1])
    policy = parse_text(args["rules"], args["root"] + "/.py-sandboxes", cwd=args["root"],
                        environ={})
    plan = ll.build_plan(policy, abi=args["abi"], prefixes=(sys.base_prefix, sys.prefix),
                         executables=(sys.executable,))
    if args.get("allow_unix"):
        plan = plan.replace(allow_unix=True)
    out = {}
    try:
        ll.apply(plan)
    except ConfigError as exc:
        print(json.dumps({"apply": "ConfigError: " + str(exc)}))
        sys.exit(0)
    def probe(name, fn):
        try:
            fn()
            out[name] = "ok"
        except OSError as exc:
            out[name] = errno.errorcode.get(exc.errno, str(exc.errno))
    for name, path in args.get("read", {}).items():
        probe(name, lambda p=path: open(p).read())
    for name, path in args.get("truncate", {}).items():
        probe(name, lambda p=path: os.truncate(p, 0))
    if "connect" in args:
        probe("connect", lambda: socket.create_connection(("127.0.0.1", args["connect"]), 5))
    if "abstract" in args:
        def abstract():
            s = socket.socket(socket.AF_UNIX)
            s.connect("\\0" + args["abstract"])
        probe("abstract", abstract)
    if "signal" in args:
        probe("signal", lambda: os.kill(args["signal"], 0))
    probe("exec_python", lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f)
    out["no_new_privs"] = status["NoNewPrivs"].strip()
    for name in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"):
        out[name] = status[name].strip()
    print(json.dumps(out))
    """
)


def run_child(**args: Any) -> dict[str, str]:
    proc = subprocess.run(
        [PYTHON, "-c", CHILD, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, str] = json.loads(proc.stdout.splitlines()[-1])
    return result


@pytest.fixture
def kernel_abi() -> int:
    abi = ll.landlock_abi()
    require(abi > 0, f"Landlock unavailable: {ll.PROVIDER.availability().reason}")
    return abi


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "data.txt").write_text("data")
    (tmp_path / "single.txt").write_text("single")
    (tmp_path / "outside.txt").write_text("outside")
    (tmp_path / "rw").mkdir()
    (tmp_path / "rw" / "file.txt").write_text("rw")
    return tmp_path


@pytest.mark.parametrize("abi", range(1, 8))
def test_each_abi_version_applies_what_it_can(kernel_abi: int, layout: Path, abi: int) -> None:
    require(abi <= kernel_abi, f"kernel has Landlock ABI {kernel_abi} < {abi}")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        sleeper = subprocess.Popen(["sleep", "60"])
        try:
            result = run_child(
                rules=f"py-sandbox=true\nexpose-ro={layout}/ro\nexpose-ro={layout}/single.txt\n"
                f"expose-rw={layout}/rw\n",
                root=str(layout),
                abi=abi,
                read={
                    "inside": f"{layout}/ro/data.txt",
                    "single_file": f"{layout}/single.txt",
                    "outside": f"{layout}/outside.txt",
                },
                truncate={"truncate_rw": f"{layout}/rw/file.txt"},
                connect=port,
                signal=sleeper.pid,
            )
        finally:
            sleeper.kill()
            sleeper.wait()
    assert result["inside"] == "ok" and result["single_file"] == "ok"
    assert result["outside"] == "EACCES"
    assert result["truncate_rw"] == "ok"
    assert result["exec_python"] == "ok"
    assert result["no_new_privs"] == "1"
    assert result["connect"] == ("EACCES" if abi >= 4 else "ok")
    assert result["signal"] == ("EPERM" if abi >= 6 else "ok")


def test_abstract_unix_scope_holds_when_unix_sockets_allowed(
    kernel_abi: int, tmp_path: Path
) -> None:
    require(kernel_abi >= 6, "Landlock scopes need ABI 6 (Linux 6.12)")
    name = f"pysb-test-{tmp_path.name}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("\0" + name)
        server.listen()
        allowed = run_child(
            rules="", root=str(tmp_path), abi=kernel_abi, abstract=name, allow_unix=True
        )
        refused = run_child(rules="", root=str(tmp_path), abi=kernel_abi, abstract=name)
    assert allowed["abstract"] == "EPERM"  # the socket exists, Landlock's scope refuses
    assert refused["abstract"] == "EACCES"  # seccomp refuses socket(AF_UNIX) itself


def test_missing_exposed_path_stops_before_restricting(kernel_abi: int, tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()
    rules = f"expose-ro={tmp_path}/gone\n"
    script = CHILD.replace("out = {}", "out = {}\nos.rmdir(args['root'] + '/gone')")
    proc = subprocess.run(
        [PYTHON, "-c", script, json.dumps({"rules": rules, "root": str(tmp_path), "abi": 7})],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert "does not exist" in result["apply"] and "gone" in result["apply"]


def test_capabilities_beyond_the_kept_ones_are_dropped(kernel_abi: int, tmp_path: Path) -> None:
    result = run_child(rules="", root=str(tmp_path), abi=kernel_abi)
    for name in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"):
        assert int(result[name], 16) & ~ll.KEPT_CAPABILITIES == 0, (name, result[name])
    if os.geteuid() == 0:  # root keeps what the kernel still bounds: files and low ports
        assert int(result["CapEff"], 16) == ll.KEPT_CAPABILITIES


def test_unopenable_exposed_path_is_a_clear_error(kernel_abi: int, tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import os, sys
        from pysandboxes.errors import ConfigError
        from pysandboxes.policy.model import Policy
        from pysandboxes.providers import landlock as ll
        loop = sys.argv[1] + "/loop"
        os.symlink("loop", loop)
        plan = ll.build_plan(Policy(), abi=int(sys.argv[2]))
        plan = plan.replace(paths=(ll.PathGrant(loop, ll.RIGHTS_RO, "expose-ro (f(1))", True),))
        try:
            ll.apply(plan)
        except ConfigError as exc:
            print(exc)
        print("restricted" if open("/proc/self/status").read().count("NoNewPrivs:\\t1") else "free")
        """
    )
    proc = subprocess.run(
        [PYTHON, "-c", code, str(tmp_path), str(kernel_abi)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"expose-ro (f(1)): cannot open {tmp_path}/loop" in proc.stdout
    assert proc.stdout.split()[-1] == "free"  # refused before restricting anything
