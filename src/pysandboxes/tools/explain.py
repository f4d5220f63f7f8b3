"""``python-sb --explain [--json] [same arguments as a run]`` (SPEC §2.8).

Prints what a rule file does not show on its own: every rule in effect after includes, variables
and command-line rules, each with its origin; the mode and the provider that would run, and
whether that provider can run on this machine; and warnings for what weakens the file as a
policy (``./`` includes, a variable in ``os-sandbox=``, no ``learn=false`` lock, command-line
rules, the user and node profiles not included). It runs nothing.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from pysandboxes.launch.cli import RunPlan
    from pysandboxes.policy.model import Origin, Policy

__all__ = ["NODE_PROFILE", "USER_PROFILE", "explain", "explain_data", "render_text"]

USER_PROFILE = "~/.config/py-sandboxes/user-py-sandboxes.profile"
NODE_PROFILE = "/etc/py-sandboxes/global-py-sandboxes.profile"


def explain(plan: RunPlan, *, as_json: bool = False) -> int:
    """Print the explanation of ``plan`` (built by the launcher from the same arguments as a
    run); exit status 0. ``launch/cli.py`` loads this module by name (``cli.EXPLAIN``: tools
    sit above launch, which imports nothing of them) and hands it the plan."""

    data = explain_data(plan)
    if as_json:
        import json

        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(data))
    return 0


def _origin(origin: Origin | None) -> str | None:
    return None if origin is None else str(origin)


def _raw_line(origin: Origin) -> str | None:
    """The line as written in its file (before variable expansion), or ``None``."""

    if origin.file is None or origin.line <= 0:
        return None
    try:
        with open(origin.file, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if number == origin.line:
                    return line.rstrip("\n")
    except OSError:
        return None
    return None


def _provider_data(name: str, policy: Policy, mode: str) -> dict[str, Any]:
    from pysandboxes.errors import ConfigError
    from pysandboxes.providers import get_provider

    try:
        provider = get_provider(name)
    except ConfigError as exc:
        return {
            "name": name,
            "kernel": False,  # nothing of it is in this version: no boundary it could give
            "available": False,
            "reason": str(exc).partition(": ")[2] or str(exc),
            "install_hint": "",
            "notes": [],
            "limits": [],
        }
    availability = provider.availability()
    try:
        notes = [str(line) for line in provider.explain(policy)]
    except Exception as exc:  # a provider that cannot describe this policy says why
        notes = [f"cannot describe this policy: {type(exc).__name__}: {exc}"]
    found: list[dict[str, object]] = []
    try:
        if availability.ok:  # (a provider that cannot run here says why instead)
            found = [item.to_dict() for item in provider.announcements(policy, mode)]
    except Exception as exc:
        found = [{"key": None, "status": "unknown", "text": str(exc), "at_start": False}]
    # acknowledge= (docs/rules.md): the line that says a limit is known; a run does not say it.
    known = {rule.name: str(rule.origin) for rule in policy.acknowledge}
    for item in found:
        item["acknowledged"] = known.get(str(item["key"])) if item["at_start"] else None
    return {
        "name": name,
        "kernel": bool(provider.kernel),
        "available": bool(availability.ok),
        "reason": availability.reason,
        "install_hint": availability.install_hint,
        "notes": notes,
        # The provider's own records (announcements): the text form prints the same; a run
        # says those marked at_start. Enforced (with a difference worth knowing), limit
        # (announced), refused: providers/limits.py.
        "limits": found,
    }


def _expand_profile(path: str) -> str:
    return os.path.normpath(os.path.expanduser(path))


def warnings_for(
    plan: RunPlan, provider: dict[str, Any], environment: list[str] | str = ""
) -> list[str]:
    """What weakens the rule file as a policy (SPEC §2.8), one sentence each."""

    policy = plan.policy
    found: list[str] = []
    for include in policy.includes:
        if include.written.startswith(("./", "../")):
            found.append(
                f'{include.origin}: include "{include.written}" is resolved from the current '
                "directory: whoever runs the command can add rules there"
            )
    setting = policy.os_sandbox
    if setting.origin is not None:
        raw = _raw_line(setting.origin)
        if raw is not None and "$" in raw:
            found.append(
                f"{setting.origin}: os-sandbox= uses a variable ({raw.strip()}): the environment "
                f"of whoever runs python-sb chooses the provider (now {setting.value})"
            )
    if policy.lock is None:
        found.append(
            "no learn=false line: the configuration is not locked, so command-line rules, "
            "--learn and the API can widen these rules"
        )
    arg_lines = [line for line in policy.lines if line.origin.is_arg]
    if arg_lines:
        found.append("command-line rules in effect: " + ", ".join(line.text for line in arg_lines))
    if plan.rule_file_exists:
        resolved = {include.resolved for include in policy.includes}
        for profile in (USER_PROFILE, NODE_PROFILE):
            if _expand_profile(profile) not in resolved:
                found.append(
                    f'the rule files do not include "{profile}": its rules (for every '
                    f"{'project of the user' if profile == USER_PROFILE else 'run on this node'})"
                    " do not apply"
                )
    else:
        found.append(f"the rule file {plan.rule_file} does not exist: a run starts learning mode")
    if plan.mode == "learn":
        found.append(
            "learning mode: the Python layer allows everything the program does and writes it "
            f"as rules to {plan.learn_output}; the kernel layer is not applied. Use it only "
            "for trusted code or in a disposable environment"
        )
    elif plan.mode == "audit":
        found.append("audit mode: nothing is enforced, refusals are only reported")
    if not policy.py_sandbox.value:
        found.append(f"py-sandbox=false ({_origin(policy.py_sandbox.origin)}): no Python layer")
    if not provider["kernel"]:
        found.append(
            f"os-sandbox={provider['name']}: no kernel boundary; enough against misused "
            "legitimate code, not against hostile code"
        )
    if not provider["available"]:
        found.append(f"os-sandbox={provider['name']} cannot run here: {provider['reason']}")
    from pysandboxes.platform_caps import CAPS, not_here

    if not CAPS.linux:  # issue 19: macOS, Windows (or the portable paths forced, in tests)
        found.append(
            "the Python layer is the only enforcement possible here: "
            + not_here("a kernel sandbox")
        )
    if isinstance(environment, list):
        for name in sorted(set(environment) & set(PRE_ARM_VARIABLES)):
            found.append(f"env= passes {name}: {PRE_ARM_VARIABLES[name]}")
    cmd = plan.cmd
    judged = bool(policy.py_sandbox.value) or bool(provider["kernel"])
    if plan.mode == "enforce" and cmd.kind == "script" and cmd.program and judged:
        from pysandboxes.providers.limits import check_script

        refusal = check_script(policy, cmd.program, (sys.prefix, sys.base_prefix))
        if refusal is not None:
            found.append(f"a run is refused: {refusal.text}")
    found.extend(str(warning) for warning in policy.warnings)
    return found


#: Variables that let files act on the program's interpreter before the Python layer is armed.
PRE_ARM_VARIABLES = {
    "PYTHONPATH": "its directories come before the standard library, and a sitecustomize.py "
    "there runs before the Python layer is armed",
    "PYTHONHOME": "it chooses the standard library the program's interpreter loads",
    "PYTHONUSERBASE": "a usercustomize.py and .pth files under it run before the Python layer "
    "is armed",
    "PYTHONSTARTUP": "the REPL runs that file (under the Python layer)",
    "PYTHONBREAKPOINT": "breakpoint() imports and calls what it names",
}


def explain_data(plan: RunPlan) -> dict[str, Any]:
    """The explanation as plain data (the ``--json`` form)."""

    policy = plan.policy
    provider = _provider_data(plan.provider_name, policy, plan.mode)
    environment: list[str] | str
    if plan.mode != "enforce":
        environment = f"all of python-sb's environment ({plan.mode} mode enforces nothing)"
    else:
        try:
            from pysandboxes.policy.decide import build_environment

            environment = sorted(build_environment(policy, os.environ))
        except Exception as exc:
            environment = f"refused: {exc}"
    cmd = plan.cmd
    from pysandboxes.guard.accelerator import describe

    return {
        "rule_file": plan.rule_file,
        "rule_file_exists": plan.rule_file_exists,
        "mode": plan.mode,
        "learn_output": plan.learn_output,
        "locked_by": _origin(policy.lock),
        "program": {"kind": cmd.kind, "program": cmd.program, "args": list(cmd.args)},
        "settings": {
            "py-sandbox": {
                "value": policy.py_sandbox.value,
                "origin": _origin(policy.py_sandbox.origin),
            },
            "os-sandbox": {
                "value": policy.os_sandbox.value,
                "origin": _origin(policy.os_sandbox.origin),
            },
            "learn": _learn_setting(policy),
        },
        # The audit hook's compiled accelerator (guard/accelerator.py), when the layer is on.
        "accelerator": describe(os.environ),
        "rules": [
            {"key": line.key, "value": line.value, "origin": str(line.origin)}
            for line in policy.lines
        ],
        "includes": [
            {
                "written": include.written,
                "resolved": include.resolved,
                "origin": str(include.origin),
                "status": include.status,
            }
            for include in policy.includes
        ],
        "rule_files": list(policy.rule_files),
        "variables": _variables_data(plan),
        "environment": environment,
        "descriptors": _descriptors(plan.mode),
        "provider": provider,
        "warnings": warnings_for(plan, provider, environment),
        "eval": _eval_data(policy),
    }


def _descriptors(mode: str) -> list[dict[str, str]]:
    """The descriptors the program starts with (``providers/descriptors.py`` closes the rest)."""

    from pysandboxes.providers.descriptors import passed

    return [{"fd": fd, "what": what} for fd, what in passed(mode)]


def _learn_setting(policy: Policy) -> dict[str, Any]:
    """``learn=``'s effective value: the learning output, ``false`` under the lock (with the
    lock line as its origin), or unset (``None``, the default)."""

    if policy.learn.value is None and policy.lock is not None:
        return {"value": False, "origin": _origin(policy.lock)}
    return {"value": policy.learn.value, "origin": _origin(policy.learn.origin)}


def _variables_data(plan: RunPlan) -> list[dict[str, str]]:
    """The environment variables the rule files read (``policy.loader.variables_read``, the
    record the coding-agent hook checks assignments against): a command that sets one of them
    changes the rules."""

    if not plan.rule_file_exists:
        return []
    from pysandboxes.policy.loader import variables_read

    found = variables_read(plan.rule_file, environ=os.environ, cwd=plan.cwd)
    return [{"name": name, "origin": origin} for name, origin in sorted(found.items())]


def _eval_data(policy: Policy) -> list[dict[str, Any]]:
    if not policy.eval_rules:
        return []
    from pysandboxes.evalguard.explain import profiles_data

    return profiles_data(policy)


def _accelerator_text(accelerator: dict[str, Any]) -> str:
    """The ``python layer:`` line of the text form (docs/performance.md, the accelerator)."""

    if accelerator["error"]:
        return f"the run will not start: {accelerator['error']}"
    choice = f"PYSANDBOXES_ACCELERATOR={accelerator['choice']}"
    if accelerator["compiled"]:
        return f"the audit hook with its compiled accelerator ({choice})"
    if accelerator["built"]:
        return f"the audit hook in pure Python ({choice})"
    if accelerator["choice"] == "require":
        return f"the run will not start: the compiled accelerator is not built ({choice})"
    return f"the audit hook in pure Python: the compiled accelerator is not built ({choice})"


def render_text(data: dict[str, Any]) -> str:
    """The human form of :func:`explain_data`."""

    from pysandboxes.policy.model import display_path

    out: list[str] = []
    exists = "" if data["rule_file_exists"] else "  (missing)"
    out.append(f"rule file: {display_path(data['rule_file'])}{exists}")
    mode = data["mode"]
    if mode == "learn":
        mode += f" (writes {display_path(data['learn_output'])})"
    out.append(f"mode: {mode}")
    out.append(f"locked by: {data['locked_by'] or 'nothing (no learn=false line)'}")
    program = data["program"]
    shown = program["program"] if program["program"] is not None else ""
    out.append(f"program: {program['kind']} {shown}".rstrip())
    out.append("")
    out.append("settings:")
    for key, setting in data["settings"].items():
        origin = setting["origin"] or "default"
        value = setting["value"]
        if isinstance(value, bool):
            value = str(value).lower()
        out.append(f"  {key}={'' if value is None else value}    [{origin}]")
    out.append("")
    out.append(f"rules ({len(data['rules'])}):")
    width = max((len(f"{r['key']}={r['value']}") for r in data["rules"]), default=0)
    width = min(width, 60)
    for rule in data["rules"]:
        text = f"{rule['key']}={rule['value']}"
        out.append(f"  {text:<{width}}  [{rule['origin']}]")
    if data["includes"]:
        out.append("")
        out.append("includes:")
        for include in data["includes"]:
            out.append(
                f'  include "{include["written"]}" -> {display_path(include["resolved"])}'
                f"  {include['status']}  [{include['origin']}]"
            )
    if data.get("variables"):
        out.append("")
        out.append("variables the rule files read (setting one changes the rules):")
        for variable in data["variables"]:
            out.append(f"  {variable['name']}  [{variable['origin']}]")
    out.append("")
    env = data["environment"]
    if isinstance(env, str):
        out.append(f"environment: {env}")
    else:
        names = ", ".join(env) if env else "(none)"
        out.append(f"environment passed to the program (values not shown): {names}; and TMPDIR")
    out.append("descriptors passed to the program (every other one python-sb inherited is closed):")
    for item in data["descriptors"]:
        out.append(f"  {item['fd']}: {item['what']}")
    accelerator = data.get("accelerator")
    if accelerator and data["settings"]["py-sandbox"]["value"]:
        out.append(f"python layer: {_accelerator_text(accelerator)}")
    provider = data["provider"]
    out.append("")
    state = "available here" if provider["available"] else "NOT available here"
    boundary = "kernel boundary" if provider["kernel"] else "no kernel boundary"
    out.append(f"provider: os-sandbox={provider['name']} ({boundary}), {state}")
    if not provider["available"]:
        out.append(f"  why: {provider['reason']}")
        if provider["install_hint"]:
            out.append(f"  install: {provider['install_hint']}")
    for note in provider["notes"]:
        out.append(f"  {note}")
    for item in provider["limits"]:
        when = ""
        if item.get("acknowledged"):
            when = f" (not said at start: acknowledge={item['key']}, {item['acknowledged']})"
        elif item["at_start"]:
            unless = f" unless acknowledge={item['key']}" if item["key"] else ""
            when = f" (said at start{unless})"
        out.append(f"  {item['status']}: {item['text']}{when}")
    out.append("")
    if data.get("eval"):
        from pysandboxes.evalguard.explain import render

        out.extend([*render(data["eval"]), ""])
    if data["warnings"]:
        out.append(f"warnings ({len(data['warnings'])}):")
        for warning in data["warnings"]:
            out.append(f"  - {warning}")
    else:
        out.append("warnings: none")
    return "\n".join(out) + "\n"
