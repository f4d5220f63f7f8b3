"""What ``--review`` reads in the manifests ``python-sb --export`` renders (issue 31).

A rendered manifest carries the rules twice: the flattened rule file in its ``ConfigMap`` (which
``--review`` compares as it compares rule files), and the orchestrator's own boundary around the
pod -- its security context, volumes, environment and ``NetworkPolicy``. A change of the second
kind can widen a pod as surely as a rule can (a ``hostPath`` volume, ``privileged: true``, an
egress block), so those fields are compared too, leaf by leaf, and ranked:

- ``high``: any change of a security field (pod and container ``securityContext``,
  ``hostNetwork``/``hostPID``/``hostIPC``/``hostUsers``, ``automountServiceAccountToken``,
  ``runtimeClassName``, ``serviceAccountName``, the ``--pysandboxes-config`` argument), a new
  ``hostPath`` volume, a mount losing ``readOnly``, a new environment variable, a new egress
  block;
- ``review``: other additions or changes (the image, the program's arguments, a new volume of
  another kind, a new ingress rule);
- ``low``: removals that take a right away (a volume, a variable, a network rule).
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Manifest", "ManifestError", "changes", "read"]

RULES_KEY = "rules.py-sandboxes"
MANAGED = ("app.kubernetes.io/managed-by", "python-sb")

_SECURITY_WORDS = (
    "securityContext",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "hostUsers",
    "automountServiceAccountToken",
    "runtimeClassName",
    "serviceAccountName",
    "shareProcessNamespace",
    "privileged",
)


class ManifestError(ValueError):
    """A file that is not a manifest rendered by python-sb, or cannot be read."""


class Manifest:
    """One version: the rule file of its ConfigMap and the flattened pod and network fields."""

    def __init__(self, rules: str, leaves: dict[str, str]) -> None:
        self.rules = rules
        self.leaves = leaves


def _key(item: Any) -> str:
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        return f"[{item['name']}]"
    if isinstance(item, dict) and isinstance(item.get("mountPath"), str):
        return f"[{item['mountPath']}]"
    return "[" + json.dumps(item, sort_keys=True, separators=(",", ":")) + "]"


def _flatten(value: Any, path: str, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        if not value:
            out[path] = "{}"
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        if not value:
            out[path] = "[]"
        for item in value:
            if isinstance(item, dict) and ("name" in item or "mountPath" in item):
                keyed = "name" if isinstance(item.get("name"), str) else "mountPath"
                rest = {k: v for k, v in item.items() if k != keyed}
                _flatten(rest or {"present": True}, path + _key(item), out)
            else:
                out[path + _key(item)] = "present"
    else:
        out[path] = json.dumps(value)


def read(documents: list[Any], source: str) -> Manifest:
    """The facts of the documents of one rendered manifest file."""

    rules: str | None = None
    leaves: dict[str, str] = {}
    for doc in documents:
        if not isinstance(doc, dict):
            raise ManifestError(f"{source}: a document that is not a mapping")
        kind = doc.get("kind")
        spec: dict[str, Any] = doc["spec"] if isinstance(doc.get("spec"), dict) else {}
        labels = (doc.get("metadata") or {}).get("labels") or {}
        if kind == "ConfigMap" and RULES_KEY in (doc.get("data") or {}):
            rules = str(doc["data"][RULES_KEY])
            if labels.get(MANAGED[0]) != MANAGED[1]:
                raise ManifestError(f"{source}: the ConfigMap is not marked as python-sb's")
        elif kind == "Pod":
            _flatten(spec, "pod", leaves)
        elif kind == "SandboxTemplate":
            template = spec.get("podTemplate") or {}
            _flatten(template.get("spec") or {}, "pod", leaves)
            _flatten(spec.get("networkPolicy") or {}, "net", leaves)
        elif kind == "NetworkPolicy":
            for part in ("ingress", "egress"):
                _flatten(spec.get(part), f"net.{part}", leaves)
        else:
            _flatten(doc, f"other.{kind}", leaves)
    if rules is None:
        raise ManifestError(
            f"{source}: no ConfigMap with {RULES_KEY}: not a manifest rendered by "
            "python-sb --export"
        )
    return Manifest(rules, leaves)


def _risk(path: str, change: str, value: str) -> tuple[str, str]:
    """(risk, why) of one changed leaf."""

    if any(word in path for word in _SECURITY_WORDS):
        return "high", "a field of the pod's own boundary (security context, host namespaces, "
    if ".args" in path and "--pysandboxes-config" in path:
        return "high", "python-sb reads another rule file in the pod"
    if path.startswith("net.egress"):
        if change == "removed":
            return "low", "less egress from the pod"
        return "high", "the pod reaches more of the network"
    if path.startswith("net.ingress"):
        return ("low", "less ingress") if change == "removed" else ("review", "more ingress")
    if ".volumes" in path:
        if change == "removed":
            return "low", "a volume less"
        if "hostPath" in path:
            return "high", "a directory of the node enters the pod"
        return "review", "a volume more"
    if ".volumeMounts" in path:
        if path.endswith(".readOnly") and change == "removed":
            return "high", "a mount is no longer read-only"
        if path.endswith(".readOnly") and value == "false":
            return "high", "a mount is no longer read-only"
        return ("low", "a mount less") if change == "removed" else ("review", "a mount more")
    if ".env" in path:
        if change == "removed":
            return "low", "a variable less in the container"
        return "high", "a variable more in the container (a secret the program might read)"
    if change == "removed":
        return "low", "a field removed"
    return "review", "a field of the pod changed"


def changes(old: Manifest | None, new: Manifest | None) -> list[tuple[str, str, str, str]]:
    """(risk, change, text, why) for every leaf that differs; ``None``: no such version."""

    before = old.leaves if old else {}
    after = new.leaves if new else {}
    found = []
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a == b:
            continue
        if a is None:
            change, text = "added", f"{path} = {b}"
        elif b is None:
            change, text = "removed", f"{path} = {a}"
        else:
            change, text = "changed", f"{path}: {a} -> {b}"
        risk, why = _risk(path, change, b if b is not None else (a or ""))
        if why.endswith(", "):
            why = why + "service account)"
        found.append((risk, change, text, why))
    return found
