"""``python-sb --providers [--json]``: which ``os-sandbox`` providers can run here, and why not.

Each provider's own availability probe answers (a real attempt where one is needed: the
namespaces and a new ``/proc`` for bwrap and unshare, the Landlock system calls), so the table
says what a run would meet. Inside a container the first line names the runtime and what the
process runs under (seccomp filter, ``no_new_privs``, ``CAP_SYS_ADMIN``), and each refusal names
the runtime option that would lift it (docs/containers.md). Nothing is run in a sandbox.

Exit status 0, or 2 for a bad argument.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROG = "python-sb"
USAGE = f"usage: {PROG} --providers [--json]\n"


def report() -> dict[str, Any]:
    """The container (if any) and every provider's availability, as plain data."""

    from pysandboxes.errors import ConfigError
    from pysandboxes.platform_caps import CAPS
    from pysandboxes.providers import MODULES, get_provider

    container: dict[str, Any] | None = None
    if CAPS.linux:
        from pysandboxes.providers import _container

        box = _container.cached()
        if box:
            container = {
                "runtime": box.runtime,
                "evidence": box.evidence,
                "rootless": box.rootless,
                "seccomp_filter": box.seccomp == 2,
                "no_new_privs": box.no_new_privs,
                "cap_sys_admin": box.cap_sys_admin,
            }
    rows = []
    for name in MODULES:
        try:
            provider = get_provider(name)
            available = provider.availability()
            ok, reason, hint = bool(available), available.reason, available.install_hint
            kernel = bool(provider.kernel)
        except ConfigError as exc:
            ok, reason, hint, kernel = False, str(exc), "", name not in ("none", "subprocess")
        rows.append(
            {"name": name, "kernel": kernel, "works": ok, "reason": reason, "install_hint": hint}
        )
    return {"container": container, "providers": rows}


def render(data: dict[str, Any]) -> str:
    box = data["container"]
    lines = []
    if box is None:
        lines.append("python-sb runs on the host (no container seen)")
    else:
        kind = "a container" if box["runtime"] == "container" else f"a {box['runtime']} container"
        rootless = ", rootless" if box["rootless"] else ""
        lines.append(
            f"python-sb runs in {kind}{rootless} ({box['evidence']}): seccomp filter "
            f"{'yes' if box['seccomp_filter'] else 'no'}, no_new_privs "
            f"{'yes' if box['no_new_privs'] else 'no'}, CAP_SYS_ADMIN "
            f"{'yes' if box['cap_sys_admin'] else 'no'}"
        )
    width = max(len(row["name"]) for row in data["providers"])
    for row in data["providers"]:
        state = "works" if row["works"] else "cannot run"
        text = f"  {row['name']:<{width}}  {state}"
        if row["reason"]:
            text += f": {row['reason']}"
        if not row["works"] and row["install_hint"]:
            text += f"\n  {'':<{width}}    to enable it: {row['install_hint']}"
        lines.append(text)
    return "\n".join(lines) + "\n"


def main(words: list[str]) -> int:
    as_json = False
    for word in words:
        if word == "--json":
            as_json = True
        elif word in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        else:
            sys.stderr.write(f"{PROG} --providers: unknown argument {word!r}\n{USAGE}")
            return 2
    data = report()
    if as_json:
        import json

        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render(data))
    return 0
