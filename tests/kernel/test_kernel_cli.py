"""``python-sb --install-kernel``/``--uninstall-kernel`` and ``--kernel``'s checks, without
starting a kernel: the kernelspec written, bad input refused with a clear error (exit 2) and
nothing lost, the connection file's rules shown with their origin by ``--explain``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import base_env, run_sb
from tests.kernel.support import require_kernel_packages


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    require_kernel_packages()
    (tmp_path / "home").mkdir()
    return base_env(tmp_path / "home", {"JUPYTER_DATA_DIR": str(tmp_path / "data")})


def _connection(path: Path, **changes: object) -> Path:
    info: dict[str, object] = {
        "shell_port": 50001,
        "iopub_port": 50002,
        "stdin_port": 50003,
        "control_port": 50004,
        "hb_port": 50005,
        "ip": "127.0.0.1",
        "key": "0123",
        "transport": "tcp",
        "signature_scheme": "hmac-sha256",
        "kernel_name": "",
    }
    info.update(changes)
    path.write_text(json.dumps({k: v for k, v in info.items() if v is not None}))
    return path


def test_install_writes_a_kernelspec_that_runs_python_sb_under_the_rules(
    tmp_path: Path, env: dict[str, str]
) -> None:
    rules = tmp_path / "nb.py-sandboxes"
    rules.write_text("os-sandbox=landlock\npython-import=json\n")
    out = run_sb(
        ["--install-kernel", "--rules", str(rules), "--name", "nb", "--user"],
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    spec = json.loads((tmp_path / "data" / "kernels" / "nb" / "kernel.json").read_text())
    assert spec["argv"][0].endswith("python-sb")
    assert spec["argv"][1:] == ["--kernel={connection_file}", f"--pysandboxes-config={rules}"]
    assert spec["interrupt_mode"] == "signal"
    assert spec["language"] == "python"

    out = run_sb(["--uninstall-kernel", "--name", "nb", "--user"], cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "data" / "kernels" / "nb").exists()


def test_install_refuses_a_missing_or_broken_rule_file(tmp_path: Path, env: dict[str, str]) -> None:
    out = run_sb(
        ["--install-kernel", "--rules", str(tmp_path / "none"), "--user"], cwd=tmp_path, env=env
    )
    assert out.returncode == 2
    assert "does not exist" in out.stderr and "--notebook" in out.stderr
    broken = tmp_path / "broken.py-sandboxes"
    broken.write_text("no-such-key=1\n")
    out = run_sb(["--install-kernel", "--rules", str(broken), "--user"], cwd=tmp_path, env=env)
    assert out.returncode == 2
    assert "broken.py-sandboxes(1)" in out.stderr
    assert not (tmp_path / "data" / "kernels").exists()  # nothing written


def test_install_and_uninstall_refuse_bad_options(tmp_path: Path, env: dict[str, str]) -> None:
    rules = tmp_path / "r.py-sandboxes"
    rules.write_text("os-sandbox=subprocess\n")
    for words in (
        ["--install-kernel", "--user"],  # no rules
        ["--install-kernel", "--rules", str(rules), "--name", "a/b", "--user"],
        ["--install-kernel", "--rules", str(rules), "--user", "--prefix", str(tmp_path)],
        ["--install-kernel", "--rules", str(rules), "--bogus"],
    ):
        out = run_sb(words, cwd=tmp_path, env=env)
        assert out.returncode == 2, words
        assert "usage: python-sb --install-kernel" in out.stderr
    # A kernelspec python-sb did not write is left alone.
    other = tmp_path / "data" / "kernels" / "other"
    other.mkdir(parents=True)
    (other / "kernel.json").write_text(json.dumps({"argv": ["python"], "language": "python"}))
    out = run_sb(["--uninstall-kernel", "--name", "other", "--user"], cwd=tmp_path, env=env)
    assert out.returncode == 2
    assert "not a kernelspec written by python-sb" in out.stderr
    assert (other / "kernel.json").exists()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"ip": "0.0.0.0"}, "is not a loopback address"),
        ({"ip": "192.0.2.1"}, "is not a loopback address"),
        ({"transport": "ipc"}, "only 'tcp' on loopback"),
        ({"hb_port": None}, "hb_port is None"),
        ({"shell_port": "50001"}, "shell_port is '50001'"),
        ({"iopub_port": 70000}, "iopub_port is 70000"),
    ],
)
def test_a_bad_connection_file_is_refused_before_anything_runs(
    tmp_path: Path, env: dict[str, str], changes: dict[str, object], expected: str
) -> None:
    rules = tmp_path / "r.py-sandboxes"
    rules.write_text("os-sandbox=subprocess\n")
    connection = _connection(tmp_path / "kernel-1.json", **changes)
    out = run_sb([f"--kernel={connection}", f"--pysandboxes-config={rules}"], cwd=tmp_path, env=env)
    assert out.returncode == 2
    assert expected in out.stderr
    assert "nothing was run" in out.stderr


def test_a_file_that_is_no_connection_file_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    for words in (
        [f"--kernel={secret}"],
        [f"--kernel={tmp_path / 'missing.json'}"],
        ["--kernel"],
        [f"--kernel={_connection(tmp_path / 'k.json')}", "script.py"],  # no program may follow
    ):
        out = run_sb(words, cwd=tmp_path, env=env)
        assert out.returncode == 2, words
        assert "BEGIN OPENSSH" not in out.stderr + out.stdout


def test_explain_shows_the_kernel_rules_with_their_origin(
    tmp_path: Path, env: dict[str, str]
) -> None:
    rules = tmp_path / "r.py-sandboxes"
    rules.write_text("os-sandbox=landlock\nlearn=false\n")
    connection = _connection(tmp_path / "kernel-7.json")
    out = run_sb(
        [f"--kernel={connection}", f"--pysandboxes-config={rules}", "--explain", "--json"],
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    shown = {(rule["key"], rule["value"]): rule["origin"] for rule in data["rules"]}
    for port in range(50001, 50006):
        assert shown[("net", f"ALLOW|TCP|127.0.0.1|{port}|IN")].startswith("<kernel kernel-7.json>")
    assert shown[("expose-ro", str(connection))].startswith("<kernel kernel-7.json>")
    assert "kernel.py-sandboxes>" in shown[("python-api", "ALLOW:threading.Thread.start")]
    # Under the lock the kernel still starts: its rules are not command-line rules.
    assert data["locked_by"] == "r.py-sandboxes(2)"
    assert not [w for w in data["warnings"] if "command-line rules" in w]


def test_qemu_is_refused_with_the_reason(tmp_path: Path, env: dict[str, str]) -> None:
    rules = tmp_path / "r.py-sandboxes"
    rules.write_text("os-sandbox=qemu\n")
    connection = _connection(tmp_path / "kernel-q.json")
    out = run_sb([f"--kernel={connection}", f"--pysandboxes-config={rules}"], cwd=tmp_path, env=env)
    assert out.returncode == 2
    assert "r.py-sandboxes(1): os-sandbox=qemu cannot run a Jupyter kernel" in out.stderr
