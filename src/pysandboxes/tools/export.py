"""``python-sb --export=kubernetes|agent-sandbox [export options] [same arguments as a run]``.

Renders the effective policy of a run -- after includes, variables and command-line rules, as
``--explain`` sees it -- as Kubernetes manifests (issue 31, SPEC §7), so that the one reviewed
rule file drives the orchestrator's isolation too:

- a ``ConfigMap`` holding the effective rules as one flattened rule file (origins as comments,
  ``learn=false`` added: a pod never learns), mounted read-only at ``/etc/py-sandboxes``;
- ``kubernetes``: a ``Pod`` whose container runs the program under ``python-sb`` with that file,
  so the Python layer and the kernel provider (``landlock`` in a pod) still hold inside it, and a
  ``NetworkPolicy``; ``agent-sandbox``: the same pod as the ``podTemplate`` of an agent-sandbox
  ``SandboxTemplate`` (``extensions.agents.x-k8s.io/v1beta1``), its network policy embedded;
- ``expose-ro`` -> read-only volume mounts (by default the files come with the image: the root
  file system is read-only), ``expose-rw`` -> writable volumes (``emptyDir`` unless mapped with
  ``--mount``), ``env=`` -> the only environment variables (host values from a ``Secret``),
  ``runAsNonRoot``, every capability dropped, ``seccompProfile: RuntimeDefault``, no
  privilege escalation, no service-account token, no service links;
- ``net=`` -> ``NetworkPolicy`` egress by CIDR and port (DNS to the cluster resolver only when a
  rule names a host), ``IN`` rules -> ingress. What a NetworkPolicy cannot express (host names,
  a DENY with ports inside an ALLOW, UDP-only ...) is written as a comment in the manifest and
  said on stderr with what would express it; python-sb inside the pod still enforces it.

Nothing is dropped silently: every rule key is either rendered or refused (a test keeps the list
of keys complete). Exit status 0, 2 for bad arguments or a run that would not enforce.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import sys

from pysandboxes.tools.yamlsub import Comment, dump_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pysandboxes.policy.model import NetRule, Policy

__all__ = ["ExportError", "Exported", "main", "render"]

PROG = "python-sb"
FORMATS = ("kubernetes", "agent-sandbox")
RULES_DIR = "/etc/py-sandboxes"
RULES_NAME = "rules.py-sandboxes"
SANDBOX_API = "extensions.agents.x-k8s.io/v1beta1"
#: The label every rendered object carries, and the annotation with the rules' digest.
MANAGED_BY = "python-sb"
#: (base64url of the SHA-256, 50 characters: podman 4.3's ``kube play`` refuses annotation values
#: longer than 63.)
DIGEST_ANNOTATION = "python-sb/rules-digest"
USAGE = (
    f"usage: {PROG} --export=kubernetes|agent-sandbox --image=IMAGE [--name=NAME] "
    "[--namespace=NS]\n"
    "         [--mount=PATH=SOURCE ...] [--workdir=DIR] [--uid=N] [--runtime-class=NAME] "
    "[--output=FILE]\n"
    "         [same arguments as a run: rule options, python options, program, args]\n"
    "  SOURCE: image (the files come with the image; expose-ro's default), emptyDir "
    "(expose-rw's default),\n"
    "          hostPath[:NODE-PATH], pvc:CLAIM, configMap:NAME, secret:NAME\n"
)
SOURCES = ("image", "emptyDir", "hostPath", "pvc", "configMap", "secret")


class ExportError(Exception):
    """Arguments or a policy that cannot be rendered (exit status 2)."""


class Options:
    """The export options (before the run's own arguments)."""

    def __init__(self) -> None:
        self.format = ""
        self.image = ""
        self.name = ""
        self.namespace = ""
        self.mounts: dict[str, str] = {}
        self.workdir = ""
        self.uid = 65532
        self.runtime_class = ""
        self.output = ""


class Exported:
    """What :func:`render` made: the manifests' text and the notes said on stderr."""

    def __init__(
        self, text: str, notes: list[str], steps: list[str], documents: list[dict[str, Any]]
    ) -> None:
        self.text = text
        self.notes = notes  # what Kubernetes cannot express (python-sb in the pod still does)
        self.steps = steps  # what the user must still do or know before applying
        self.documents = documents


def parse_options(words: list[str]) -> tuple[Options, list[str]]:
    """The export options and the run's arguments (every word from the first that is not an
    export option)."""

    opts = Options()
    if not words:
        raise ExportError(f"--export needs a format: {' or '.join(FORMATS)}")
    opts.format = words[0]
    if opts.format not in FORMATS:
        raise ExportError(f"--export={opts.format}: unknown format (one of: {', '.join(FORMATS)})")
    i = 1
    valued = ("image", "name", "namespace", "mount", "workdir", "uid", "runtime-class", "output")
    while i < len(words):
        word = words[i]
        name, eq, value = word[2:].partition("=") if word.startswith("--") else ("", "", "")
        if name not in valued:
            break
        if not eq:
            if i + 1 >= len(words):
                raise ExportError(f"--{name} needs a value")
            i += 1
            value = words[i]
        if not value:
            raise ExportError(f"--{name} needs a value")
        if name == "mount":
            path, sep, source = value.rpartition("=")
            if not sep or not path:
                raise ExportError(f"--mount={value}: write --mount=PATH=SOURCE")
            kind = source.partition(":")[0]
            if kind not in SOURCES:
                raise ExportError(
                    f"--mount={value}: unknown source {source!r} (one of: {', '.join(SOURCES)})"
                )
            if kind in ("pvc", "configMap", "secret") and not source.partition(":")[2]:
                raise ExportError(f"--mount={value}: {kind} needs a name ({kind}:NAME)")
            opts.mounts[os.path.abspath(os.path.expanduser(path))] = source
        elif name == "uid":
            if not value.isdigit() or int(value) == 0:
                raise ExportError(f"--uid={value}: a user id other than 0 (runAsNonRoot)")
            opts.uid = int(value)
        elif name == "workdir":
            if not value.startswith("/"):
                raise ExportError(f"--workdir={value}: an absolute path in the container")
            opts.workdir = os.path.normpath(value)
        else:
            setattr(opts, name.replace("-", "_"), value)
        i += 1
    if opts.output and opts.output.endswith((".py-sandboxes", "py-sandboxes.profile")):
        raise ExportError(f"--output={opts.output}: python-sb does not write over a rule file")
    if not opts.image:
        raise ExportError(
            "--export needs --image=IMAGE: the container image that holds python-sb and the "
            "program (docs/kubernetes.md shows one built from Debian packages)"
        )
    if opts.name and not _dns_label(opts.name):
        raise ExportError(
            f"--name={opts.name}: a Kubernetes name (lower-case letters, digits and '-', "
            "at most 50 characters, starting and ending with a letter or digit)"
        )
    return opts, words[i:]


def _dns_label(name: str) -> bool:
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-")
    return 0 < len(name) <= 50 and set(name) <= allowed and name[0] != "-" and name[-1] != "-"


def _default_name(kind: str, program: str | None) -> str:
    base = program or "python-sb"
    if kind == "script":
        base = os.path.splitext(os.path.basename(base))[0]
    elif kind == "module":
        base = base.rpartition(".")[2] or base
    elif kind == "code":
        base = "python-sb-code"
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in base.lower())
    cleaned = "-".join(part for part in cleaned.split("-") if part)[:50].strip("-")
    return cleaned if cleaned and cleaned[0].isalnum() else "python-sb"


# -- the flattened rule file --------------------------------------------------------------------


class _Relocate:
    """Paths under the directory of the export (``cwd``) moved under ``--workdir``."""

    def __init__(self, cwd: str, workdir: str) -> None:
        self.cwd = os.path.normpath(cwd)
        self.workdir = workdir or self.cwd

    def __call__(self, path: str) -> str:
        if self.workdir == self.cwd or not path.startswith("/"):
            return path
        if path == self.cwd:
            return self.workdir
        if path.startswith(self.cwd.rstrip("/") + "/"):
            return self.workdir.rstrip("/") + path[len(self.cwd.rstrip("/")) :]
        return path


#: Every key of the rule language and how it is rendered; tests/unit/tools check that no key of
#: ``policy.keys`` is missing here (a new key must be rendered or refused, never dropped).
RENDERED_KEYS = (
    "py-sandbox",
    "os-sandbox",
    "learn",
    "env",
    "unenv",
    "expose-ro",
    "expose-rw",
    "ignore",
    "python-import",
    "python-api",
    "net",
    "secret",  # refused: a pod runs landlock, and secrets need the edge proxy of bwrap/unshare
    "eval-*",
    "acknowledge",
    "PROVIDER.PARAM",
)


def rules_text(policy: Policy, relocate: _Relocate, source: str) -> str:
    """The effective policy as one rule file, each line with its origin as a comment."""

    def origin(rule: Any) -> str:
        where = getattr(rule, "origin", None)
        return f"  # {where}" if where is not None else "  # <default>"

    out = [
        f"# The effective rules of `{source}`, rendered by python-sb --export: includes resolved,",
        "# variables of paths expanded, command-line rules added; each line's origin follows it.",
        "py-sandbox="
        + ("true" if policy.py_sandbox.value else "false")
        + origin(policy.py_sandbox),
        f"os-sandbox={policy.os_sandbox.value}{origin(policy.os_sandbox)}",
        "learn=false  # added by --export: a pod enforces, it never learns or widens",
    ]
    for rule in policy.env:
        out.append(f"{rule.text}{origin(rule)}")
    for unenv in policy.unenv:
        out.append(f"{unenv.text}{origin(unenv)}")
    for key, rules in (("expose-ro", policy.expose_ro), ("expose-rw", policy.expose_rw)):
        for path_rule in rules:
            out.append(f"{key}={relocate(path_rule.path)}{origin(path_rule)}")
    for path_rule in policy.ignore:
        value = path_rule.path if path_rule.path.startswith("/") else path_rule.written
        out.append(
            f"ignore={relocate(value) if value.startswith('/') else value}" + origin(path_rule)
        )
    for name_rule in policy.python_import:
        out.append(f"python-import={name_rule.name}{origin(name_rule)}")
    for api in policy.python_api:
        out.append(f"{api.text}{origin(api)}")
    for net in policy.net:
        out.append(f"{net.text}{origin(net)}")
    for line in policy.eval_rules:
        out.append(f"{line.key}={line.value}{origin(line)}")
    for known in policy.acknowledge:  # what the pod's runs do not say at start (docs/rules.md)
        out.append(f"{known.text}{origin(known)}")
    for line in policy.provider_params:
        value = relocate(line.value) if line.value.startswith("/") else line.value
        out.append(f"{line.key}={value}{origin(line)}")
    return "\n".join(out) + "\n"


# -- volumes --------------------------------------------------------------------------------------


def _volume_name(index: int, path: str) -> str:
    tail = "".join(ch if ch.isalnum() else "-" for ch in os.path.basename(path).lower()) or "root"
    tail = "-".join(p for p in tail.split("-") if p)[:40] or "dir"
    return f"x{index}-{tail}"


def _volumes(
    policy: Policy, opts: Options, relocate: _Relocate, steps: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(volumes, volumeMounts, comment lines) for the exposures, /tmp and the rule file."""

    volumes: list[dict[str, Any]] = [
        {"name": "python-sb-rules", "configMap": {"name": f"{opts.name}-rules"}},
        {"name": "python-sb-tmp", "emptyDir": {}},
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "python-sb-rules", "mountPath": RULES_DIR, "readOnly": True},
        {"name": "python-sb-tmp", "mountPath": "/tmp"},
    ]
    comments: list[str] = [
        "/etc/py-sandboxes: the rules (ConfigMap, read-only); /tmp: python-sb's private temporary",
        "directories (emptyDir). The root file system is read-only; exposures:",
    ]
    exposed = {r.path for r in policy.expose_ro} | {r.path for r in policy.expose_rw}
    for path in opts.mounts:
        if path not in exposed:
            raise ExportError(
                f"--mount={path}=...: no expose-ro or expose-rw rule names this path "
                f"(exposed: {', '.join(sorted(exposed)) or 'nothing'})"
            )
    index = 0
    for writable, rules in ((False, policy.expose_ro), (True, policy.expose_rw)):
        key = "expose-rw" if writable else "expose-ro"
        for rule in rules:
            target = relocate(rule.path)
            source = opts.mounts.get(rule.path, "emptyDir" if writable else "image")
            kind, _, arg = source.partition(":")
            if kind == "image":
                state = "writable" if writable else "read-only"
                comments.append(f"  {key}={target}: from the image ({state} root file system)")
                if writable:
                    steps.append(
                        f"{key}={target} is mapped to the image, whose root file system is "
                        "read-only: the program cannot write there (map it to emptyDir or a "
                        "claim)"
                    )
                continue
            if target == "/tmp" or target == RULES_DIR or target.startswith(RULES_DIR + "/"):
                raise ExportError(f"{key}={target}: python-sb owns this path in the pod")
            index += 1
            name = _volume_name(index, target)
            volume: dict[str, Any] = {"name": name}
            if kind == "emptyDir":
                volume["emptyDir"] = {}
                comments.append(f"  {key}={target}: emptyDir (starts empty, lost with the pod)")
            elif kind == "hostPath":
                volume["hostPath"] = {"path": arg or rule.path, "type": "Directory"}
                comments.append(f"  {key}={target}: hostPath {arg or rule.path} of the node")
                if os.path.isfile(rule.path):
                    volume["hostPath"]["type"] = "File"
            elif kind == "pvc":
                volume["persistentVolumeClaim"] = {"claimName": arg, "readOnly": not writable}
                comments.append(f"  {key}={target}: claim {arg}")
            elif kind == "configMap":
                volume["configMap"] = {"name": arg}
                comments.append(f"  {key}={target}: ConfigMap {arg}")
            elif kind == "secret":
                volume["secret"] = {"secretName": arg}
                comments.append(f"  {key}={target}: Secret {arg}")
            volumes.append(volume)
            mount: dict[str, Any] = {"name": name, "mountPath": target}
            if not writable or kind in ("configMap", "secret"):
                mount["readOnly"] = True
            mounts.append(mount)
    return volumes, mounts, comments


# -- environment ----------------------------------------------------------------------------------


def _referenced(template: str) -> list[tuple[str, bool]]:
    """The host variables ``template`` reads: (name or pattern, has a default)."""

    found: list[tuple[str, bool]] = []
    i = 0
    while True:
        start = template.find("${", i)
        if start < 0:
            return found
        end = template.find("}", start)
        if end < 0:
            return found
        inner = template[start + 2 : end]
        name, sep, _default = inner.partition(":-")
        found.append((name, bool(sep)))
        i = end + 1


def _environment(
    policy: Policy, opts: Options, steps: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(env, envFrom, comment lines): only what the ``env=`` rules read from the host."""

    secret = f"{opts.name}-env"
    env: list[dict[str, Any]] = []
    env_from: list[dict[str, Any]] = []
    seen: set[str] = set()
    patterns: list[str] = []
    for rule in policy.env:
        for name, _has_default in _referenced(rule.template):
            if "*" in name:
                patterns.append(name)
                continue
            if name in seen:
                continue
            seen.add(name)
            env.append(
                {
                    "name": name,
                    "valueFrom": {"secretKeyRef": {"name": secret, "key": name, "optional": True}},
                }
            )
    comments = [
        "The container's only variables: those the env= rules read, from the Secret "
        f"{secret} (optional keys).",
        "python-sb passes the program only what env= grants; literal env= values need no "
        "variable here.",
    ]
    if patterns:
        env_from.append({"secretRef": {"name": secret, "optional": True}})
        comments.append(
            f"env= patterns ({', '.join(sorted(set(patterns)))}) take every key of {secret} "
            "(envFrom); python-sb still passes only the names the patterns match."
        )
    if env or env_from:
        keys = ", ".join(sorted(seen | set(patterns)))
        steps.append(
            f"the env= rules read {keys}: create the Secret {secret} with those keys "
            f"(kubectl create secret generic {secret} --from-literal=NAME=VALUE ...)"
        )
    return env, env_from, comments


# -- network --------------------------------------------------------------------------------------


def _protocols(rule: NetRule) -> list[str]:
    return ["TCP", "UDP"] if rule.proto == "*" else [rule.proto]


def _ports(rule: NetRule) -> list[dict[str, Any]] | None:
    """NetworkPolicy ports of ``rule``; ``None`` for every port."""

    if rule.ports is None:
        return None
    out = []
    for proto in _protocols(rule):
        for low, high in rule.ports:
            port: dict[str, Any] = {"protocol": proto, "port": low}
            if high > low:
                port["endPort"] = high
            out.append(port)
    return out


def _blocks(host: str) -> list[str]:
    if host == "*":
        return ["0.0.0.0/0", "::/0"]
    network = ipaddress.ip_network(host, strict=False)
    return [str(network)]


def _network(
    policy: Policy, notes: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(egress rules, ingress rules, comment lines) of the ``net=`` rules."""

    comments: list[str] = []
    egress: list[dict[str, Any]] = []
    ingress: list[dict[str, Any]] = []
    out_rules = [r for r in policy.net if r.direction in ("OUT", "*")]
    in_rules = [r for r in policy.net if r.direction in ("IN", "*")]
    denies = [r for r in out_rules if r.action == "DENY"]
    whole_denies = [
        r for r in denies if not r.is_name and r.ports is None and r.proto == "*" and r.host != "*"
    ]
    for rule in denies:
        if rule.host == "*" and rule.ports is None and rule.proto == "*":
            continue  # denies every destination: no ALLOW below is rendered
        if rule in whole_denies:
            continue
        why = "a host name" if rule.is_name else "ports or a protocol"
        comments.append(f"NOT EXPRESSED: {rule.text} ({rule.origin}): a DENY with {why}")
        notes.append(
            f"{rule.text}: a NetworkPolicy cannot deny {why} inside an allowed block; python-sb "
            "in the pod still refuses it (the Python layer; landlock by port only). An "
            "FQDN-aware policy engine (Cilium's toFQDNs, Calico's domain names) or python-sb's "
            "edge proxy would hold it at the network too."
        )
    deny_all = any(r.host == "*" and r.ports is None and r.proto == "*" for r in denies)
    names = False
    for rule in out_rules:
        if rule.action != "ALLOW":
            continue
        if deny_all:
            comments.append(f"not rendered: {rule.text}: a DENY of every destination wins")
            continue
        if rule.is_name:
            names = True
            comments.append(f"NOT EXPRESSED: {rule.text} ({rule.origin}): a host name")
            notes.append(
                f"{rule.text}: a NetworkPolicy has no host names, so the pod's egress to "
                f"{rule.host} is not opened by this NetworkPolicy; allow its addresses with an "
                "FQDN-aware policy engine (Cilium's toFQDNs, Calico's domain names) or python-sb's "
                "edge proxy. python-sb in the pod still checks the name."
            )
            continue
        to = []
        for cidr in _blocks(rule.host):
            block: dict[str, Any] = {"cidr": cidr}
            network = ipaddress.ip_network(cidr)
            excepted = []
            for deny in whole_denies:
                inner = ipaddress.ip_network(deny.host, strict=False)
                same = inner.version == network.version and inner != network
                if same and inner.subnet_of(network):  # type: ignore[arg-type]
                    excepted.append(str(inner))
            if any(ipaddress.ip_network(d.host, strict=False) == network for d in whole_denies):
                comments.append(f"not rendered: {rule.text}: a DENY of the same block wins")
                continue
            if excepted:
                block["except"] = excepted
            to.append({"ipBlock": block})
        if not to:
            continue
        entry: dict[str, Any] = {"to": to}
        ports = _ports(rule)
        if ports is not None:
            entry["ports"] = ports
        egress.append(entry)
        comments.append(f"egress: {rule.text} ({rule.origin})")
    for deny in whole_denies:
        comments.append(f"egress except: {deny.text} ({deny.origin})")
    if names:
        egress.append(
            {
                "to": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                        },
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                    }
                ],
                "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
            }
        )
        comments.append("egress: DNS to the cluster resolver only (a rule names a host)")
    for rule in in_rules:
        if rule.action != "ALLOW":
            continue
        if rule.is_name:
            comments.append(f"NOT EXPRESSED: {rule.text}: an IN rule by host name")
            notes.append(f"{rule.text}: an IN rule by name has no NetworkPolicy form")
            continue
        network = ipaddress.ip_network(rule.host if rule.host != "*" else "0.0.0.0/0", strict=False)
        if network.is_loopback:
            comments.append(f"ingress: {rule.text}: a loopback server, reached from the pod only")
            continue
        entry = {}
        ports = _ports(rule)
        if ports is not None:
            entry["ports"] = ports
        ingress.append(entry)
        comments.append(f"ingress from anywhere: {rule.text} ({rule.origin})")
    return egress, ingress, comments


# -- the documents -------------------------------------------------------------------------------


_PROVIDER_NOTES = {
    "landlock": "",
    "subprocess": "os-sandbox=subprocess: only the Python layer holds inside the pod (and the pod)",
    "none": "os-sandbox=none: only the Python layer holds inside the pod (and the pod)",
    "bwrap": (
        "os-sandbox=bwrap needs user namespaces and a new /proc in the pod: hostUsers: false, "
        "securityContext.procMount: Unmasked and a seccomp profile that allows unshare; with "
        "the hardened fields rendered here python-sb refuses to start (it never falls back): "
        "consider os-sandbox=landlock for pods"
    ),
    "qemu": (
        "os-sandbox=qemu needs qemu in the image and namespaces for its network (see bwrap); "
        "consider os-sandbox=landlock, or a Kata runtime class for a VM per pod"
    ),
}
_PROVIDER_NOTES["unshare"] = _PROVIDER_NOTES["bwrap"].replace("bwrap", "unshare")


def rules_digest(rules: str) -> str:
    """``sha256-`` and the base64url SHA-256 of the rendered rule file."""

    import base64

    raw = hashlib.sha256(rules.encode()).digest()
    return "sha256-" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def render(opts: Options, policy: Policy, cmd: Any, cwd: str, source: str) -> Exported:
    """The manifests of ``policy`` for the run ``cmd`` (a parsed command line)."""

    notes: list[str] = []
    steps: list[str] = []
    if policy.secrets:
        secret = policy.secrets[0]
        raise ExportError(
            f"{secret.origin}: {secret.text}: secret= is not exported: the pod runs "
            "os-sandbox=landlock, and secrets need the edge proxy of bwrap or unshare "
            "(docs/rules.md §2.4a)"
        )
    if not opts.name:
        opts.name = _default_name(cmd.kind, cmd.program)
    relocate = _Relocate(cwd, opts.workdir)
    rules = rules_text(policy, relocate, source)
    digest = rules_digest(rules)
    labels = {"app.kubernetes.io/name": opts.name, "app.kubernetes.io/managed-by": MANAGED_BY}
    meta: dict[str, Any] = {"name": opts.name, "labels": dict(labels)}
    if opts.namespace:
        meta["namespace"] = opts.namespace
    config_meta: dict[str, Any] = {**meta, "name": f"{opts.name}-rules"}
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": config_meta,
        "data": {RULES_NAME: rules},
    }
    volumes, mounts, volume_notes = _volumes(policy, opts, relocate, steps)
    env, env_from, env_notes = _environment(policy, opts, steps)
    provider = str(policy.os_sandbox.value)
    if _PROVIDER_NOTES.get(provider):
        steps.append(_PROVIDER_NOTES[provider])
    args = [f"--pysandboxes-config={RULES_DIR}/{RULES_NAME}"]
    program_words = list(cmd.python_words)
    if cmd.kind == "script" and cmd.program and os.path.isabs(cmd.program) and program_words:
        program_words[-1] = relocate(cmd.program)
    args += program_words + list(cmd.args)
    container: dict[str, Any] = {
        "name": "program",
        "#image": Comment("python-sb and the program come with the image (--image)."),
        "image": opts.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["python-sb"],
        "args": args,
        "workingDir": relocate(cwd),
        "#env": Comment(*env_notes),
        "env": env,
    }
    if env_from:
        container["envFrom"] = env_from
    container["securityContext"] = {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    in_ports = sorted(
        {
            low
            for rule in policy.net
            if rule.direction == "IN" and rule.action == "ALLOW" and rule.ports is not None
            for low, high in rule.ports
            if low == high
        }
    )
    if in_ports:
        container["ports"] = [{"containerPort": port} for port in in_ports]
    container["#volumes"] = Comment(*volume_notes)
    container["volumeMounts"] = mounts
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
    }
    if opts.runtime_class:
        pod_spec["runtimeClassName"] = opts.runtime_class
    pod_spec["securityContext"] = {
        "runAsNonRoot": True,
        "runAsUser": opts.uid,
        "runAsGroup": opts.uid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    pod_spec["containers"] = [container]
    pod_spec["volumes"] = volumes
    egress, ingress, net_notes = _network(policy, notes)
    annotations = {DIGEST_ANNOTATION: digest}
    documents: list[dict[str, Any]] = [configmap]
    if opts.format == "kubernetes":
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {**meta, "annotations": annotations},
            "spec": pod_spec,
        }
        netpol: dict[str, Any] = {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {**meta, "name": f"{opts.name}-net"},
            "#net": Comment(*net_notes) if net_notes else Comment("no net= rule: no traffic"),
            "spec": {
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": opts.name}},
                "policyTypes": ["Ingress", "Egress"],
                "ingress": ingress,
                "egress": egress,
            },
        }
        documents += [pod, netpol]
    else:
        template = {
            "apiVersion": SANDBOX_API,
            "kind": "SandboxTemplate",
            "metadata": {**meta, "annotations": annotations},
            "spec": {
                "podTemplate": {
                    "metadata": {"labels": dict(labels), "annotations": annotations},
                    "spec": {k: v for k, v in pod_spec.items() if k != "restartPolicy"},
                },
                "networkPolicyManagement": "Managed",
                "#net": Comment(*net_notes) if net_notes else Comment("no net= rule: no traffic"),
                "networkPolicy": {"ingress": ingress, "egress": egress},
            },
        }
        documents.append(template)
    header = [
        f"python-sb --export={opts.format}: the rules of {source}, rendered for Kubernetes.",
        "The pod runs the program under python-sb with these rules (Python layer and "
        f"os-sandbox={provider} inside the pod);",
        "the pod's own fields add a second boundary around it. Review changes with "
        "`python-sb --review OLD.yaml NEW.yaml`.",
    ]
    if notes:
        header.append("Not expressed by Kubernetes (python-sb in the pod still enforces them):")
        header += [f"  - {note}" for note in notes]
    if steps:
        header.append("Before applying:")
        header += [f"  - {step}" for step in steps]
    return Exported(dump_all(documents, header), notes, steps, documents)


def main(words: list[str]) -> int:
    from pysandboxes.errors import ConfigError
    from pysandboxes.launch.argv import UsageError, parse
    from pysandboxes.launch.cli import current_directory, plan_run, say_refused

    if any(word in ("-h", "--help") for word in words[1:2]):
        sys.stdout.write(USAGE)
        return 0
    try:
        opts, rest = parse_options(words)
        try:
            cmd = parse(rest)
        except UsageError as exc:
            raise ExportError(str(exc)) from None
        if cmd.action != "run":
            raise ExportError("--export takes the arguments of a run (a program to run)")
        if cmd.no_program or cmd.kind in ("repl", "stdin"):
            raise ExportError(
                "--export needs a program: a script, -m module or -c code (a pod has no terminal "
                "for the REPL)"
            )
        if cmd.denials is not None:
            raise ExportError(
                "--denials has no place in a pod: python-sb's refusals go to the pod's log"
            )
        cwd = current_directory()
        plan = plan_run(cmd, cwd)
        if plan.mode != "enforce" or not plan.rule_file_exists:
            raise ExportError(
                "--export renders an enforced run: "
                + (
                    f"no rule file at {plan.rule_file} (learning mode would run)"
                    if not plan.rule_file_exists
                    else f"this run would be in {plan.mode} mode"
                )
            )
        from pysandboxes.policy.model import display_path

        exported = render(opts, plan.policy, cmd, cwd, display_path(plan.rule_file))
    except ExportError as exc:
        sys.stderr.write(f"{PROG} --export: {exc}\n{USAGE}")
        return 2
    except ConfigError as exc:
        say_refused(exc)
        return 2
    for note in exported.notes:
        sys.stderr.write(f"{PROG} --export: not expressed by Kubernetes: {note}\n")
    for step in exported.steps:
        sys.stderr.write(f"{PROG} --export: before applying: {step}\n")
    if opts.output:
        with open(opts.output, "w", encoding="utf-8") as handle:
            handle.write(exported.text)
    else:
        sys.stdout.write(exported.text)
    return 0
