"""``python-sb --kernel=CONNECTION_FILE [run options]``: a Jupyter kernel under python-sb.

The command a kernelspec written by ``python-sb --install-kernel`` runs (docs/kernel.md). The
front-end (jupyter_client, JupyterLab, nbclient) writes a connection file and starts
``python-sb --kernel={connection_file} --pysandboxes-config=RULES``; python-sb then runs
ipykernel, as the program ``-c`` :data:`BOOT` (:mod:`pysandboxes.integrations.kernel_start`,
in the sandbox), under the rule file and three more sources of rules, each with its own origin
in ``--explain`` and none a silent widening:

- the rule file itself (``--pysandboxes-config``, located as for any ``-c`` run otherwise);
- ``kernel.py-sandboxes`` next to this module, origin ``<.../kernel.py-sandboxes>``: what
  ipykernel needs whatever the notebook does (its threads; ctypes, which it imports), each line
  commented;
- the connection file's own rules, origin ``<kernel CONNECTION_FILE>``: ``expose-ro`` of that one
  file (nothing else of the front-end's runtime directory, which holds the other kernels' keys),
  one ``net=ALLOW|TCP|IP|PORT|IN`` per ZMQ port on the loopback address it names (under bwrap,
  unshare and qemu those IN rules forward the host's loopback ports into the sandbox), and the
  two variables Jupyter gives every kernel (``JPY_PARENT_PID``, ``JPY_SESSION_NAME``).

The last two have an origin that is no file (``<...>``): learning mode never writes them into the
rule file it learns (they are the launcher's, not the notebook's).

The connection file is checked before anything runs: a JSON object of at most 64 KiB with the
``tcp`` transport, a loopback ``ip`` and the five ports (anything else is refused, exit 2): the
option cannot be used to expose another file or to open a port on another interface.

Runs in python-sb's own process (the launcher's side): the standard library only, no jupyter
import.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from typing import Any

from pysandboxes.errors import ConfigError, ConfigProblem
from pysandboxes.launch.argv import PROG, UsageError, parse
from pysandboxes.launch.cli import RunPlan, run_command, say_refused
from pysandboxes.policy import parse_text
from pysandboxes.policy.model import RULE_FIELDS, Origin, Policy, display_path

__all__ = [
    "BASE_PROFILE",
    "BOOT",
    "PORT_NAMES",
    "Connection",
    "add_kernel_rules",
    "kernel_rules_text",
    "main",
    "read_connection_file",
]

#: The program python-sb runs for a kernel (``-c``): python-sb's own module, in the sandbox.
BOOT = "from pysandboxes.integrations.kernel_start import main; main()"
#: What every kernel needs, as rule lines with their comments (see the file).
BASE_PROFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel.py-sandboxes")
#: The five ZMQ ports of a Jupyter connection file (the kernel binds them: IN).
PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
#: A connection file is a few hundred bytes; anything much larger is not one.
MAX_CONNECTION_FILE = 64 * 1024
#: The options of a run that ``--kernel`` passes on (the program is the kernel's own).
_USAGE = (
    f"usage: {PROG} --kernel=CONNECTION_FILE [--pysandboxes-config=FILE] [--learn[=FILE] | "
    "--audit] [--denials=FILE] [--key=value ...] [--explain [--json]]"
)


class Connection:
    """A checked connection file: its absolute path, loopback address and five ports."""

    def __init__(self, path: str, ip: str, ports: dict[str, int]) -> None:
        self.path = path
        self.ip = ip
        self.ports = ports


def _refusal(where: str, message: str) -> ConfigError:
    return ConfigError([ConfigProblem(where, message)])


def read_connection_file(path: str) -> Connection:
    """The connection file at ``path``, checked (see the module docstring); ``ConfigError``."""

    shown = display_path(os.path.abspath(path))
    where = f"--kernel={shown}"
    absolute = os.path.realpath(path)
    try:
        with open(absolute, "rb") as handle:
            data = handle.read(MAX_CONNECTION_FILE + 1)
    except OSError as exc:
        raise _refusal(where, f"cannot read the connection file: {exc.strerror or exc}") from None
    if len(data) > MAX_CONNECTION_FILE:
        raise _refusal(where, "not a Jupyter connection file (larger than 64 KiB)")
    try:
        info = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _refusal(where, f"not a Jupyter connection file (not JSON: {exc})") from None
    if not isinstance(info, dict):
        raise _refusal(where, "not a Jupyter connection file (not a JSON object)")
    transport = info.get("transport", "tcp")
    if transport != "tcp":
        raise _refusal(
            where,
            f"transport {transport!r}: only 'tcp' on loopback is supported (the ipc transport's "
            "socket files are not granted)",
        )
    ip = info.get("ip", "127.0.0.1")
    if not isinstance(ip, str) or not _loopback(ip):
        raise _refusal(
            where,
            f"ip {ip!r} is not a loopback address: python-sb grants the kernel's ports on "
            "loopback only (a kernel reachable from other hosts needs net= IN rules of its own "
            "rule file and a front-end that writes that address)",
        )
    ports: dict[str, int] = {}
    for name in PORT_NAMES:
        value = info.get(name)
        if type(value) is not int or not 0 < value < 65536:
            raise _refusal(where, f"not a Jupyter connection file ({name} is {value!r})")
        ports[name] = value
    if not isinstance(info.get("key", ""), str):
        raise _refusal(where, "not a Jupyter connection file (key is not a string)")
    return Connection(absolute, "127.0.0.1" if ip == "localhost" else ip, ports)


def _loopback(ip: str) -> bool:
    if ip == "localhost":
        return True
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


def kernel_rules_text(connection: Connection) -> str:
    """The rule lines of the connection file (origin ``<kernel FILE>``, one line each)."""

    lines = [f"expose-ro={connection.path}"]
    # What a Jupyter front-end tells every kernel: the parent's PID (a number; ipykernel's
    # parent poller is off: parent_handle=1) and the notebook's path (ipykernel's __session__).
    lines += ["env=JPY_PARENT_PID=${JPY_PARENT_PID}", "env=JPY_SESSION_NAME=${JPY_SESSION_NAME}"]
    lines += [f"net=ALLOW|TCP|{connection.ip}|{port}|IN" for port in connection.ports.values()]
    return "\n".join(lines) + "\n"


#: The fields merged by :func:`add_kernel_rules`: every rule field, and the lines and warnings
#: that ``--explain`` shows with them.
_MERGED_FIELDS = (*RULE_FIELDS, "lines", "warnings")


def _merged(policy: Policy, extra: Policy, label: str) -> Policy:
    """``policy`` with the rules of ``extra``, whose origin becomes ``label`` (same lines)."""

    def relabel(rule: Any) -> Any:
        if isinstance(rule, str):  # a warning
            return rule
        return rule.replace(origin=Origin(label, rule.origin.line, rule.origin.learned))

    changes = {
        name: (*getattr(policy, name), *(relabel(rule) for rule in getattr(extra, name)))
        for name in _MERGED_FIELDS
    }
    return policy.replace(**changes)


def add_kernel_rules(plan: RunPlan, connection: Connection) -> RunPlan:
    """``plan`` with the kernel's rules added: :data:`BASE_PROFILE` and the connection file's."""

    if plan.provider_name == "qemu":
        # qemu forwards an IN rule's host port to the VM's network address, not to its
        # loopback, where ipykernel binds the connection file's address; a wildcard bind would
        # make the host listen on every interface. Refused rather than a kernel that never
        # answers (docs/kernel.md, Providers).
        where = str(plan.policy.os_sandbox.origin or "<default>")
        raise _refusal(
            where,
            "os-sandbox=qemu cannot run a Jupyter kernel: the front-end reaches the kernel's "
            "ports on the host's loopback, and qemu forwards host ports to the VM's network "
            "address, not its loopback (use landlock, bwrap or unshare)",
        )
    environ = os.environ
    # Both with an origin that is no file ("<...>"): rules the launcher supplies, shown as such
    # by --explain, and never learned into the rule file (learn/session.py).
    with open(BASE_PROFILE, encoding="utf-8") as handle:
        text = handle.read()
    base = parse_text(text, BASE_PROFILE, environ=environ, cwd=plan.cwd)
    own = parse_text(kernel_rules_text(connection), connection.path, environ=environ, cwd=plan.cwd)
    merged = _merged(plan.policy, base, f"<{display_path(BASE_PROFILE)}>")
    plan.policy = _merged(merged, own, f"<kernel {display_path(connection.path)}>")
    # What the banner and %sandbox say (pysandboxes.integrations.kernel_start).
    layer = "on" if plan.policy.py_sandbox.value else "off"
    rules = display_path(plan.rule_file) if plan.rule_file_exists else "(no rule file)"
    plan.cmd.args += [
        f"--sb-rules={rules}",
        f"--sb-provider={plan.provider_name}",
        f"--sb-mode={plan.mode}",
        f"--sb-python-layer={layer}",
    ]
    if plan.mode == "learn":
        plan.cmd.args.append(f"--sb-learn={display_path(str(plan.learn_output))}")
    return plan


def main(words: list[str]) -> int:
    """``python-sb --kernel=CONNECTION_FILE [run options]`` (``words[0]`` is the file)."""

    if not words or not words[0] or words[0].startswith("-"):
        sys.stderr.write(f"{PROG}: --kernel needs the connection file\n{_USAGE}\n")
        return 2
    path, options = words[0], words[1:]
    stray = [word for word in options if not word.startswith("--")]
    if stray or "--" in options:
        sys.stderr.write(
            f"{PROG}: --kernel runs the kernel itself: no program or Python option may follow "
            f"({' '.join(stray or ['--'])})\n{_USAGE}\n"
        )
        return 2
    try:
        connection = read_connection_file(path)
        # The program is the kernel: ipykernel started by BOOT, told its connection file.
        # parent_handle=1: no parent poller (python-sb may stay as the kernel's parent, and in
        # a PID namespace the kernel's parent is PID 1), no "Ctrl-C will not work" notice.
        words = [*options, "-c", BOOT, "-f", connection.path, "--IPKernelApp.parent_handle=1"]
        cmd = parse(words)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n{_USAGE}\n")
        return 2
    except ConfigError as exc:
        say_refused(exc)
        return 2
    if cmd.action not in ("run", "explain"):
        sys.stderr.write(f"{PROG}: --kernel runs the kernel\n{_USAGE}\n")
        return 2
    return run_command(cmd, adjust=lambda plan: add_kernel_rules(plan, connection))
