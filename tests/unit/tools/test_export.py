"""``python-sb --export=kubernetes|agent-sandbox`` (issue 31): the rendered manifests, checked
against the Kubernetes API schema (``kubernetes-validate``, strict: unknown fields refused), and
what they express and say they cannot. Through the real command; podman runs them in
tests/containers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pysandboxes.policy import keys
from pysandboxes.tools import export, yamlsub
from tests.helpers import base_env, run_sb

K8S_VERSION = "1.33.0"

RULES = """\
os-sandbox=landlock
learn=false
expose-ro=./app
expose-rw=./out
python-import=os, json
env=GREETING=${GREETING:-hi}
env=TOKEN=${API_TOKEN}
env=MODE=fast
net=ALLOW|TCP|api.example.com|443|OUT
net=ALLOW|*|10.0.0.0/8|*|OUT
net=DENY|*|10.1.0.0/16|*|OUT
net=DENY|TCP|10.2.0.0/16|22|OUT
net=ALLOW|UDP|192.0.2.7|5000-5010|OUT
net=ALLOW|TCP|0.0.0.0/32|8000|IN
net=ALLOW|TCP|127.0.0.1|9000|IN
"""


@pytest.fixture
def scene(tmp_path: Path, home: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "proj"
    (project / "app").mkdir(parents=True)
    (project / "out").mkdir()
    (project / "app" / "main.py").write_text("print('hi')\n")
    (project / ".py-sandboxes").write_text(RULES)
    return project, base_env(home)


def export_docs(project: Path, env: dict[str, str], *args: str) -> tuple[list[Any], str]:
    done = run_sb(
        ["--export=kubernetes", "--image=registry.example/app:1", *args], cwd=project, env=env
    )
    assert done.returncode == 0, done.stderr
    return yamlsub.load_all(done.stdout), done.stderr


def by_kind(docs: list[Any], kind: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


def validate(doc: dict[str, Any]) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_manifests_validate_against_the_kubernetes_schema(scene: Any) -> None:
    project, env = scene
    docs, _ = export_docs(project, env, "--mount=./app=pvc:code", "app/main.py", "x")
    assert [d["kind"] for d in docs] == ["ConfigMap", "Pod", "NetworkPolicy"]
    for doc in docs:
        validate(doc)


def test_sandbox_template_embeds_the_same_pod(scene: Any) -> None:
    project, env = scene
    done = run_sb(
        ["--export=agent-sandbox", "--image=registry.example/app:1", "app/main.py"],
        cwd=project,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    docs = yamlsub.load_all(done.stdout)
    template = by_kind(docs, "SandboxTemplate")
    assert template["apiVersion"] == "extensions.agents.x-k8s.io/v1beta1"
    spec = template["spec"]
    assert set(spec) == {"podTemplate", "networkPolicyManagement", "networkPolicy"}
    # The pod template's spec is a PodSpec, its network policy a restricted NetworkPolicySpec.
    validate(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "x"},
            "spec": spec["podTemplate"]["spec"],
        }
    )
    validate(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "x"},
            "spec": {"podSelector": {}, **spec["networkPolicy"]},
        }
    )
    docs2, _ = export_docs(project, env, "app/main.py")
    pod_spec = dict(by_kind(docs2, "Pod")["spec"])
    pod_spec.pop("restartPolicy")
    assert spec["podTemplate"]["spec"] == pod_spec


def test_pod_is_hardened_and_runs_python_sb_with_the_rules(scene: Any) -> None:
    project, env = scene
    docs, _ = export_docs(project, env, "--workdir=/work", "app/main.py", "x")
    pod = by_kind(docs, "Pod")["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert container["command"] == ["python-sb"]
    assert container["args"] == [
        "--pysandboxes-config=/etc/py-sandboxes/rules.py-sandboxes",
        "app/main.py",
        "x",
    ]
    assert container["workingDir"] == "/work"
    # env: only the host variables the env= rules read, from a Secret; the literal one needs none.
    assert [e["name"] for e in container["env"]] == ["GREETING", "API_TOKEN"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/etc/py-sandboxes"]["readOnly"] is True
    assert "/tmp" in mounts and "/work/out" in mounts  # expose-rw -> a writable emptyDir
    assert "readOnly" not in mounts["/work/out"]
    assert "/work/app" not in mounts  # expose-ro from the image by default
    rules = by_kind(docs, "ConfigMap")["data"]["rules.py-sandboxes"]
    assert "learn=false" in rules
    assert "expose-ro=/work/app" in rules and "expose-rw=/work/out" in rules


def test_network_policy_expresses_what_it_can_and_says_the_rest(scene: Any) -> None:
    project, env = scene
    docs, stderr = export_docs(project, env, "app/main.py")
    netpol = by_kind(docs, "NetworkPolicy")["spec"]
    assert netpol["policyTypes"] == ["Ingress", "Egress"]
    egress = netpol["egress"]
    block = {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}
    assert {"to": [block]} in egress  # a DENY of a block inside an ALLOW: except
    udp = [e for e in egress if e["to"] == [{"ipBlock": {"cidr": "192.0.2.7/32"}}]]
    assert udp == [
        {
            "to": [{"ipBlock": {"cidr": "192.0.2.7/32"}}],
            "ports": [{"protocol": "UDP", "port": 5000, "endPort": 5010}],
        }
    ]
    dns = [e for e in egress if "namespaceSelector" in e["to"][0]]
    assert dns and dns[0]["ports"][0]["port"] == 53  # a rule names a host: the resolver
    assert netpol["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8000}]}]
    # Not expressible: said on stderr and in the manifest, never dropped.
    assert "net=ALLOW|TCP|api.example.com|443|OUT" in stderr
    assert "net=DENY|TCP|10.2.0.0/16|22|OUT" in stderr
    done = run_sb(["--export=kubernetes", "--image=i", "app/main.py"], cwd=project, env=env)
    assert "# NOT EXPRESSED: net=ALLOW|TCP|api.example.com|443|OUT" in done.stdout


def test_no_names_no_dns_and_no_rules_no_traffic(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "main.py").write_text("pass\n")
    (project / ".py-sandboxes").write_text("learn=false\nexpose-ro=.\n")
    docs, _ = export_docs(project, base_env(home), "main.py")
    netpol = by_kind(docs, "NetworkPolicy")["spec"]
    assert netpol["egress"] == [] and netpol["ingress"] == []


def test_every_rule_key_is_rendered_or_refused() -> None:
    rendered = set(export.RENDERED_KEYS)
    assert set(keys.SINGLE_KEYS) | set(keys.LIST_KEYS) <= rendered
    assert "eval-*" in rendered and "PROVIDER.PARAM" in rendered


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--export=kubernetes", "main.py"], "needs --image=IMAGE"),
        (["--export=swarm", "--image=i", "main.py"], "unknown format"),
        (["--export=kubernetes", "--image=i"], "needs a program"),
        (["--export=kubernetes", "--image=i", "--denials=d.jsonl", "main.py"], "--denials"),
        (
            ["--export=kubernetes", "--image=i", "--mount=./nope=emptyDir", "main.py"],
            "no expose-ro or expose-rw rule names this path",
        ),
        (["--export=kubernetes", "--image=i", "--mount=.=nfs", "main.py"], "unknown source"),
        (["--export=kubernetes", "--image=i", "--uid=0", "main.py"], "runAsNonRoot"),
        (["--export=kubernetes", "--image=i", "--name=Bad_Name", "main.py"], "Kubernetes name"),
        (
            ["--export=kubernetes", "--image=i", "--output=.py-sandboxes", "main.py"],
            "does not write over a rule file",
        ),
    ],
)
def test_bad_export_arguments_are_refused(
    tmp_path: Path, home: Path, args: list[str], message: str
) -> None:
    (tmp_path / "main.py").write_text("pass\n")
    (tmp_path / ".py-sandboxes").write_text("learn=false\nexpose-ro=.\n")
    done = run_sb(args, cwd=tmp_path, env=base_env(home))
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""


def test_export_refuses_a_run_that_would_not_enforce(tmp_path: Path, home: Path) -> None:
    (tmp_path / "main.py").write_text("pass\n")
    done = run_sb(["--export=kubernetes", "--image=i", "main.py"], cwd=tmp_path, env=base_env(home))
    assert done.returncode == 2
    assert "learning mode would run" in done.stderr
    assert not (tmp_path / ".py-sandboxes").exists()  # nothing learned, nothing written


def test_a_locked_file_refuses_widening_options_in_export_too(tmp_path: Path, home: Path) -> None:
    (tmp_path / "main.py").write_text("pass\n")
    (tmp_path / ".py-sandboxes").write_text("learn=false\nexpose-ro=.\n")
    done = run_sb(
        ["--export=kubernetes", "--image=i", "--expose-rw=/etc", "main.py"],
        cwd=tmp_path,
        env=base_env(home),
    )
    assert done.returncode == 2
    assert "refused" in done.stderr and "learn=false" in done.stderr


def test_review_ranks_a_widened_manifest(scene: Any) -> None:
    project, env = scene
    done = run_sb(
        ["--export=kubernetes", "--image=i", "--output=old.yaml", "app/main.py"],
        cwd=project,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    old = (project / "old.yaml").read_text()
    new = old.replace("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false")
    new = new.replace(
        "  volumes:\n", "  volumes:\n    - name: node\n      hostPath:\n        path: /var/run\n", 1
    )
    (project / "new.yaml").write_text(new)
    review = run_sb(["--review", "--json", "old.yaml", "new.yaml"], cwd=project, env=env)
    assert review.returncode == 1, review.stderr
    data = json.loads(review.stdout)
    changes = {(c["risk"], c["rule"]) for r in data["files"] for c in r["changes"]}
    assert ("high", 'pod.volumes[node].hostPath.path = "/var/run"') in changes
    assert any(risk == "high" and "readOnlyRootFilesystem" in rule for risk, rule in changes)
    same = run_sb(["--review", "old.yaml", "old.yaml"], cwd=project, env=env)
    assert same.returncode == 0


def test_review_refuses_a_manifest_it_cannot_read(tmp_path: Path, home: Path) -> None:
    (tmp_path / "a.yaml").write_text("kind: Pod\nmetadata: &x {}\n")
    (tmp_path / "b.yaml").write_text("kind: Pod\n")
    done = run_sb(["--review", "a.yaml", "b.yaml"], cwd=tmp_path, env=base_env(home))
    assert done.returncode == 1
    assert "not a manifest rendered by python-sb" in done.stdout


def test_yaml_subset_round_trip_and_refusals() -> None:
    docs = [{"a": "x: y", "b": [1, "2", True, None, {"c": "multi\nline\n"}], "d": {}, "e": []}]
    text = yamlsub.dump_all(docs, ["header"])
    assert yamlsub.load_all(text) == docs
    for bad in ("a: &anchor 1\n", "a: !!str 1\n", "a: {b: 1}\n", "a:\n\t- 1\n"):
        with pytest.raises(yamlsub.YamlError):
            yamlsub.load_all(bad)


def test_a_secret_line_is_refused() -> None:
    """issue 32: ``secret=`` needs the edge proxy of bwrap/unshare; a pod runs landlock."""

    from pysandboxes.policy.model import ARG, Policy
    from pysandboxes.policy.netrules import parse_secret

    policy = Policy(secrets=(parse_secret("TOKEN|api.example.com|Authorization", ARG),))
    opts = export.Options()
    opts.format, opts.image = "kubernetes", "i"
    with pytest.raises(export.ExportError, match="secret= is not exported"):
        export.render(opts, policy, None, "/", "x")
