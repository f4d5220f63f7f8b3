"""``python-sb --review [GIT-RANGE | OLD NEW] [--json] [--fail-on=high|any|never]``.

Lists what a change to rule files grants or removes, as rights rather than text lines: both
versions are loaded with the policy loader (:func:`pysandboxes.policy.parse_text`, includes
and variables resolved as for a run) and the two policies are compared rule by rule. Riskiest
first: the lines that deserve a human look (SPEC §7) are ``high`` — ``learn=`` and the lock,
``os-sandbox=`` (and a variable in it), ``py-sandbox=false``, ``include`` (a ``./`` include,
a user or node profile no longer included), ``expose-rw=``, outgoing ``net=ALLOW``, ``env=``,
``python-api=ALLOW:``; other new rights are ``review``; removals of rights are ``low``.

The exit status is a CI gate: 1 when a ``high`` right is added (``--fail-on=any``: any right
added; ``--fail-on=never``: 0), 2 for bad arguments, a git error or a file that cannot be read.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pysandboxes.policy.model import Origin, Policy
    from pysandboxes.tools.manifests import Manifest

__all__ = ["Change", "compare", "main"]

PROG = "python-sb"
USAGE = (
    f"usage: {PROG} --review [GIT-RANGE | OLD NEW] [--json] [--fail-on=high|any|never]\n"
    "  no argument: the working tree against HEAD; REV: the working tree against REV;\n"
    "  A..B or A...B: the commits; OLD NEW: two rule files (/dev/null for none), or two\n"
    "  manifests rendered by --export (.yaml: their rules and their pod's own fields)\n"
)
RULE_PATTERNS = ("*.py-sandboxes", "*py-sandboxes.profile")
#: Files read as manifests rendered by ``--export`` (``OLD NEW`` form; tools/manifests.py).
MANIFEST_SUFFIXES = (".yaml", ".yml")
RISK_ORDER = {"high": 0, "review": 1, "low": 2}
USER_PROFILE = "~/.config/py-sandboxes/user-py-sandboxes.profile"
NODE_PROFILE = "/etc/py-sandboxes/global-py-sandboxes.profile"
KERNEL = ("landlock", "bwrap", "unshare", "qemu")


class ReviewError(Exception):
    """Arguments, git or files that cannot be used (exit status 2)."""


class Change:
    """One right added or removed: ``risk`` (high, review, low), ``change`` (added, removed,
    changed), the rule ``text``, where it is (``origin``) and ``why`` it matters."""

    __slots__ = ("change", "origin", "risk", "text", "why")

    def __init__(self, risk: str, change: str, text: str, origin: str, why: str) -> None:
        self.risk = risk
        self.change = change
        self.text = text
        self.origin = origin
        self.why = why

    def to_data(self) -> dict[str, str]:
        return {
            "risk": self.risk,
            "change": self.change,
            "rule": self.text,
            "origin": self.origin,
            "why": self.why,
        }


class Version:
    """One side of a comparison: the loaded policy (or the load error, or no file)."""

    def __init__(self, label: str, path: str, text: str | None) -> None:
        self.label = label
        self.path = path
        self.text = text
        self.policy: Policy | None = None
        self.error: str | None = None
        self.manifest: Manifest | None = None
        if text is None:
            return
        if path.endswith(MANIFEST_SUFFIXES):
            # A manifest rendered by --export (issue 31): the rules of its ConfigMap are
            # compared as a rule file, its pod and network fields by tools/manifests.py.
            from pysandboxes.tools import manifests, yamlsub

            try:
                self.manifest = manifests.read(yamlsub.load_all(text), path)
            except ValueError as exc:
                self.error = str(exc)
                return
            text = self.text = self.manifest.rules
        from pysandboxes.errors import ConfigError
        from pysandboxes.policy import parse_text

        home = os.environ.get("HOME", os.path.expanduser("~"))
        try:
            # A fixed environment: the review must not depend on the reviewer's variables.
            self.policy = parse_text(
                text, path, environ={"HOME": home}, cwd=os.path.dirname(path), learned_ok=True
            )
        except ConfigError as exc:
            self.error = str(exc)

    def raw_line(self, origin: Origin | None) -> str:
        """The line of ``origin`` as written (variables not expanded)."""

        if origin is None or origin.file is None or origin.line <= 0:
            return ""
        if origin.file == self.path and self.text is not None:
            lines = self.text.splitlines()
        else:
            try:
                with open(origin.file, encoding="utf-8", errors="replace") as handle:
                    lines = handle.read().splitlines()
            except OSError:
                return ""
        return lines[origin.line - 1] if origin.line <= len(lines) else ""


def main(words: list[str]) -> int:
    """``python-sb --review ...``; the exit status."""

    as_json = False
    fail_on = "high"
    positional: list[str] = []
    for word in words:
        if word == "--json":
            as_json = True
        elif word.startswith("--fail-on=") and word[10:] in ("high", "any", "never"):
            fail_on = word[10:]
        elif word in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        elif word.startswith("-") and word != "-":
            sys.stderr.write(f"{PROG}: --review: unknown option {word!r}\n{USAGE}")
            return 2
        else:
            positional.append(word)
    try:
        if len(positional) == 2:
            pairs = [files_pair(positional[0], positional[1])]
        elif len(positional) <= 1:
            pairs = git_pairs(positional[0] if positional else "HEAD")
        else:
            raise ReviewError(f"too many arguments\n{USAGE}")
    except ReviewError as exc:
        sys.stderr.write(f"{PROG}: --review: {exc}\n")
        return 2
    reports = []
    for old, new in pairs:
        reports.append((old, new, compare(old, new)))
    status = exit_status(reports, fail_on)
    if as_json:
        import json

        sys.stdout.write(json.dumps(to_data(reports, status), indent=2) + "\n")
    else:
        sys.stdout.write(render(reports, status, fail_on))
    return status


# -- where the two versions come from ----------------------------------------------------------


def files_pair(old: str, new: str) -> tuple[Version, Version]:
    def read(path: str, label: str) -> Version:
        if path == "/dev/null":
            return Version(label, os.path.abspath(new if label == "old" else old), None)
        try:
            with open(path, encoding="utf-8") as handle:
                return Version(path, os.path.abspath(path), handle.read())
        except (OSError, UnicodeDecodeError) as exc:
            raise ReviewError(f"{path}: cannot be read: {exc}") from None

    return read(old, "old"), read(new, "new")


def git(args: list[str], cwd: str) -> str:
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ReviewError(f"git cannot run: {exc}") from None
    if done.returncode != 0:
        raise ReviewError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def git_pairs(spec: str) -> list[tuple[Version, Version]]:
    cwd = os.getcwd()
    try:
        top = git(["rev-parse", "--show-toplevel"], cwd).strip()
    except ReviewError:
        raise ReviewError(
            f"{spec}: not in a git repository ({cwd}); to compare two rule files, give both: "
            "--review OLD NEW"
        ) from None
    if "..." in spec:
        a, b = spec.split("...", 1)
        b = b or "HEAD"
        old_rev: str = git(["merge-base", a or "HEAD", b], top).strip()
        new_rev: str | None = b
    elif ".." in spec:
        a, b = spec.split("..", 1)
        old_rev, new_rev = a or "HEAD", b or "HEAD"
    else:
        old_rev, new_rev = spec, None  # against the working tree
    for rev in (old_rev, new_rev):
        if rev is not None:
            try:
                git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], top)
            except ReviewError:
                raise ReviewError(
                    f"{rev}: no such commit, branch or tag in {top} (a file to compare? "
                    "give two: --review OLD NEW)"
                ) from None
    diff = ["diff", "--no-renames", "--name-only", "-z", old_rev]
    if new_rev is not None:
        diff.append(new_rev)
    names = [n for n in git([*diff, "--", *RULE_PATTERNS], top).split("\0") if n]
    if new_rev is None:  # new rule files not yet added to git are part of the working tree
        untracked = git(
            ["ls-files", "--others", "--exclude-standard", "-z", "--", *RULE_PATTERNS], top
        )
        names.extend(n for n in untracked.split("\0") if n and n not in names)
    pairs = []
    for name in sorted(names):
        path = os.path.join(top, name)
        old_text = show(top, old_rev, name)
        if new_rev is None:
            try:
                with open(path, encoding="utf-8") as handle:
                    new_text: str | None = handle.read()
            except FileNotFoundError:
                new_text = None
            label = "working tree"
        else:
            new_text = show(top, new_rev, name)
            label = new_rev
        pairs.append((Version(old_rev, path, old_text), Version(label, path, new_text)))
    return pairs


def show(top: str, rev: str, name: str) -> str | None:
    import subprocess

    done = subprocess.run(
        ["git", "show", f"{rev}:{name}"], cwd=top, capture_output=True, check=False
    )
    if done.returncode != 0:
        return None  # not in that revision
    return done.stdout.decode("utf-8", "replace")


# -- the comparison ----------------------------------------------------------------------------


def _where(origin: Origin | None) -> str:
    return "<default>" if origin is None else str(origin)


def rights(version: Version) -> dict[str, tuple[str, str, str, str, str]]:
    """Every right of a policy: identity -> (risk if added, risk if removed, text, origin,
    why). Settings are compared separately."""

    found: dict[str, tuple[str, str, str, str, str]] = {}
    policy = version.policy
    if policy is None:
        return found
    # From the lines, not the resolved rules: a path missing on the reviewer's machine (skipped
    # by the loader with a warning) is still a right the file asks for.
    for line in policy.lines:
        if line.key == "expose-rw":
            found[f"expose-rw {line.value}"] = (
                "high", "low", line.text, _where(line.origin),
                f"the program may write, create and delete under {line.value}",
            )  # fmt: skip
        elif line.key == "expose-ro":
            found[f"expose-ro {line.value}"] = (
                "review", "low", line.text, _where(line.origin),
                f"the program may read {line.value}",
            )  # fmt: skip
    for rule in policy.ignore:
        found[f"ignore {rule.path}"] = (
            "review", "low", f"ignore={rule.written or rule.path}", _where(rule.origin),
            "accesses to these paths are refused silently",
        )  # fmt: skip
    for net in policy.net:
        if net.action == "ALLOW" and net.direction == "OUT":
            risk, why = "high", f"outgoing connections to {net.host}"
        elif net.action == "ALLOW":
            risk, why = "review", f"incoming connections ({net.host})"
        else:
            risk, why = "low", f"refuses {net.host}"
        removed = "high" if net.action == "DENY" else "low"
        if net.action == "DENY":
            why = f"refuses connections to {net.host}, whatever other rules allow"
        found[f"net {net.text}"] = (risk, removed, net.text, _where(net.origin), why)
    for env in policy.env:
        found[f"env {env.name}"] = (
            "high", "low", env.text, _where(env.origin),
            f"the program sees the variable {env.name} (a token or secret?)",
        )  # fmt: skip
    for secret in policy.secrets:
        # A secret goes out to its hosts: who may receive the real credential is a human call.
        found[f"secret {secret.text}"] = (
            "high", "review", secret.text, _where(secret.origin),
            f"the edge proxy sends the real {secret.name} to {', '.join(secret.hosts)} "
            f"(in {secret.header})",
        )  # fmt: skip
    for name in policy.unenv:
        found[f"unenv {name.name}"] = (
            "low", "review", name.text, _where(name.origin), f"{name.name} is never passed",
        )  # fmt: skip
    for api in policy.python_api:
        if api.action == "ALLOW":
            entry = ("high", "low", api.text, _where(api.origin), f"allows {api.target}")
        else:
            entry = ("low", "review", api.text, _where(api.origin), f"refuses {api.target}")
        found[f"api {api.text}"] = entry
    for imp in policy.python_import:
        why = "every module may be imported" if imp.name == "*" else f"imports {imp.name}"
        found[f"import {imp.name}"] = (
            "high" if imp.name == "*" else "low", "low", imp.text, _where(imp.origin), why,
        )  # fmt: skip
    for line in (*policy.eval_rules, *policy.provider_params):
        found[f"line {line.text}"] = (
            "review", "review", line.text, _where(line.origin), "changes how code is run",
        )  # fmt: skip
    for include in policy.includes:
        if include.status == "cycle":
            continue
        risk, why = "review", f"brings in the rules of {include.resolved}"
        if include.written.startswith(("./", "../")):
            risk = "high"
            why = "resolved from the current directory: whoever runs the command adds rules"
        profile = os.path.normpath(os.path.expanduser(USER_PROFILE)), NODE_PROFILE
        removed = "high" if include.resolved in profile else "review"
        if risk == "high":
            removed = "low"  # taking a ./ include away only narrows
        if include.resolved in profile:
            why = PROFILE_WHY + " apply"
        brought = [line.text for line in policy.lines if line.origin.file == include.resolved]
        if brought and include.status == "loaded":
            why += ": " + ", ".join(brought[:8]) + (", ..." if len(brought) > 8 else "")
        elif include.status == "missing":
            why += " (absent here)"
        text = f'include "{include.written}"'
        found[f"include {include.resolved}"] = (risk, removed, text, _where(include.origin), why)
    return found


#: What the include of the user's or the node's profile brings (its removal: "no longer").
PROFILE_WHY = "the user's or the node's restrictions (net=DENY...)"


def settings(version: Version) -> dict[str, tuple[str, str]]:
    """The single-valued settings: name -> (value, origin)."""

    policy = version.policy
    if policy is None:
        return {}
    learn = policy.learn.value
    values = {
        "py-sandbox": (str(policy.py_sandbox.value).lower(), _where(policy.py_sandbox.origin)),
        "os-sandbox": (str(policy.os_sandbox.value), _where(policy.os_sandbox.origin)),
        "learn": ("(off)" if learn is None else f"learning into {learn or 'the rule file'}",
                  _where(policy.learn.origin)),
        "lock": ("learn=false" if policy.lock is not None else "(none)", _where(policy.lock)),
    }  # fmt: skip
    raw = version.raw_line(policy.os_sandbox.origin)
    if "$" in raw:
        values["os-sandbox variable"] = (raw.strip(), _where(policy.os_sandbox.origin))
    return values


def compare(old: Version, new: Version) -> list[Change]:
    """The changes from ``old`` to ``new``, riskiest first."""

    changes: list[Change] = []
    if new.error is not None:
        # python-sb refuses to run on a file that does not load: nothing to compare.
        return [Change("high", "error", "(does not load)", new.path, new.error)]
    if new.text is None and old.text is not None:
        changes.append(
            Change(
                "high", "removed", "(the whole rule file)", new.path,
                "the rule file is deleted: a run of its programs starts learning mode, "
                "which allows everything",
            )
        )  # fmt: skip
    before, after = rights(old), rights(new)
    for key, (risk, _removed, text, origin, why) in after.items():
        if key not in before:
            changes.append(Change(risk, "added", text, origin, why))
    for key, (_added, removed, text, origin, why) in before.items():
        if key not in after and new.text is not None:
            verb = _no_longer(why) if removed != "low" else why
            changes.append(Change(removed, "removed", text, origin, verb))
    changes.extend(setting_changes(old, new))
    if old.manifest is not None or new.manifest is not None:
        from pysandboxes.tools.manifests import changes as manifest_changes

        for risk, change, text, why in manifest_changes(old.manifest, new.manifest):
            changes.append(Change(risk, change, text, new.path, why))
    changes.sort(key=lambda c: (RISK_ORDER[c.risk], c.change != "added", c.text))
    return changes


def _no_longer(why: str) -> str:
    """What a removed right's explanation says: "the ... restrictions (...) no longer apply",
    not "no longer applies: ... apply", which reads as its opposite (issue 26)."""

    head, sep, tail = why.partition(") apply")
    if sep and (head + ")").startswith(PROFILE_WHY):
        return f"{head}) no longer apply{tail}"
    return "no longer applies: " + why


def setting_changes(old: Version, new: Version) -> list[Change]:
    if new.policy is None:
        return []
    before, after = settings(old), settings(new)
    if old.policy is None:  # a new rule file: its settings, against python-sb's defaults
        before = {
            "py-sandbox": ("true", "<default>"),
            "os-sandbox": ("subprocess", "<default>"),
            "learn": ("(off)", "<default>"),
            "lock": ("(none)", "<default>"),
        }
    out = []
    for name in sorted(set(before) | set(after)):
        was, now = before.get(name, ("(none)", ""))[0], after.get(name, ("(none)", ""))
        if was == now[0]:
            continue
        if now[1] in ("", "<default>"):  # back to the default: show where the old line was
            now = (now[0], before.get(name, ("", "<default>"))[1])
        text = f"{name}: {was} -> {now[0]}"
        risk, why = "review", "deserves a human look"
        if name == "py-sandbox":
            risk = "high" if now[0] == "false" else "low"
            why = "the Python layer is off" if now[0] == "false" else "the Python layer is on"
        elif name == "os-sandbox":
            weaker = was in KERNEL and now[0] not in KERNEL
            risk = "high" if weaker or now[0] == "none" else "review"
            why = "no kernel boundary any more" if weaker else "another kernel layer"
        elif name == "os-sandbox variable":
            risk = "high" if now[0] != "(none)" else "low"
            why = "the environment of whoever runs python-sb chooses the provider"
        elif name == "learn":
            risk = "high" if now[0] != "(off)" else "low"
            why = "learning mode allows everything and records it"
        elif name == "lock":
            risk = "high" if now[0] == "(none)" else "low"
            why = (
                "the lock is removed: command-line rules and --learn can widen the rules"
                if now[0] == "(none)"
                else "the configuration is locked"
            )
        out.append(Change(risk, "changed", text, now[1] or "<default>", why))
    return out


# -- output ------------------------------------------------------------------------------------


def exit_status(reports: list[tuple[Version, Version, list[Change]]], fail_on: str) -> int:
    if fail_on == "never":
        return 0
    for _old, _new, changes in reports:
        for change in changes:
            if change.change == "error":
                return 1
            # a removal marked above "low" takes a restriction away: it widens too
            widening = change.change in ("added", "changed") or change.risk != "low"
            if widening and (change.risk == "high" or (fail_on == "any" and change.risk != "low")):
                return 1
    return 0


def to_data(reports: list[tuple[Version, Version, list[Change]]], status: int) -> dict[str, Any]:
    files = []
    for old, new, changes in reports:
        files.append(
            {
                "path": new.path,
                "old": old.label if old.text is not None else None,
                "new": new.label if new.text is not None else None,
                "changes": [c.to_data() for c in changes],
            }
        )
    high = sum(1 for _o, _n, cs in reports for c in cs if c.risk == "high")
    return {"files": files, "high": high, "exit_status": status}


def render(reports: list[tuple[Version, Version, list[Change]]], status: int, fail_on: str) -> str:
    if not reports:
        return f"{PROG} --review: no rule file changed\n"
    from pysandboxes.policy.model import display_path

    out = []
    for old, new, changes in reports:
        was = old.label if old.text is not None else "(none)"
        now = new.label if new.text is not None else "(deleted)"
        out.append(f"{display_path(new.path)}: {was} -> {now}")
        if not changes:
            out.append("  no change in the rights (only comments, order or spelling)")
        for change in changes:
            sign = {"added": "+", "removed": "-", "changed": "~", "error": "!"}[change.change]
            out.append(f"  {change.risk.upper():6} {sign} {change.text}")
            out.append(f"           {change.why} ({change.origin})")
    high = sum(1 for _o, _n, cs in reports for c in cs if c.risk == "high")
    verdict = "a human must review these" if status else "no high-risk right added"
    if fail_on == "never":
        verdict = "not a gate (--fail-on=never)"
    out.append(f"{high} high-risk change(s); {verdict}")
    return "\n".join(out) + "\n"
