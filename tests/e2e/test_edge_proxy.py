"""The edge proxy (issue 32): host-name ``net=`` rules judged where the sandbox's TCP traffic
leaves, under ``bwrap`` and ``unshare``, through the real ``python-sb`` with real clients.

The world of these tests is ``tests/conformance/remote.py``'s (the conformance matrix uses the
same): "another machine" (a network namespace joined to this host by a veth pair) serves HTTPS
on port 8443 and plain HTTP on port 8080 at two addresses, one standing for ``granted.test``
and one for ``refused.test``; each answers with its own name and logs every request it gets.
The certificates are made with ``openssl`` (a CA the clients are told to trust). The names are
mapped to those addresses by an ``/etc/hosts`` bind-mounted in a mount namespace of the test's
own, in which python-sb runs: python-sb and its edge proxy resolve them as they would any name.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.remote import World, in_world, other_machine
from tests.e2e.test_unshare_e2e import provider_ok
from tests.helpers import PYTHON_SB, base_env, require, require_tool

PROVIDERS = ["bwrap", "unshare"]
#: qemu's guest gets no proxy variables: its connections are redirected (the transparent cases).
TRANSPARENT = [*PROVIDERS, "qemu"]

CLIENT = r"""
import http.client, os, socket, ssl, sys, urllib.request
kind, target = sys.argv[1], sys.argv[2]
context = ssl.create_default_context(cafile=os.path.join(os.path.dirname(__file__), "ca.pem"))
try:
    if kind == "urllib":  # honours HTTPS_PROXY
        handler = urllib.request.HTTPSHandler(context=context)
        with urllib.request.build_opener(handler).open(target, timeout=30) as answer:
            print("GOT", answer.read().decode().strip())
    elif kind in ("requests", "httpx", "httpx-direct"):
        # requests and httpx honour HTTPS_PROXY; httpx with trust_env=False ignores it
        ca = os.path.join(os.path.dirname(__file__), "ca.pem")
        if kind == "requests":
            import requests
            try:
                answer = requests.get(target, verify=ca, timeout=30)
            except requests.RequestException as exc:
                raise OSError(f"{type(exc).__name__}: {exc}") from None
            print("GOT", answer.text.strip())
        else:
            import httpx
            try:
                trust = kind == "httpx"
                with httpx.Client(verify=context, timeout=30, trust_env=trust) as client:
                    answer = client.get(target)
            except httpx.HTTPError as exc:
                raise OSError(f"{type(exc).__name__}: {exc}") from None
            print("GOT", answer.text.strip())
    elif kind == "direct-tls":  # http.client ignores the proxy variables
        host, port = target.split(":")
        conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=30)
        conn.request("GET", "/direct")
        print("GOT", conn.getresponse().read().decode().strip())
    elif kind == "lying-host":  # plain HTTP to one address, naming another host
        address, port, host = target.split(":")
        with socket.create_connection((address, int(port)), timeout=30) as sock:
            sock.sendall(f"GET /lie HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        text = data.decode(errors="replace")
        body = text.split("\r\n\r\n", 1)[-1].strip()
        print("GOT", body if " 200 " in text else text.splitlines()[0])
    elif kind in ("secret-proxy", "secret-direct"):  # trusts SSL_CERT_FILE (the run's CA)
        host, port = target.split(":")
        auth = {"Authorization": "Bearer " + os.environ["TOKEN"]}
        if kind == "secret-proxy":  # CONNECT through HTTPS_PROXY
            request = urllib.request.Request(f"https://{host}:{port}/secret", headers=auth)
            with urllib.request.urlopen(request, timeout=30) as answer:
                print("GOT", answer.read().decode().strip())
        else:  # http.client: redirected, judged by the server name
            conn = http.client.HTTPSConnection(host, int(port), timeout=30)
            conn.request("GET", "/secret-direct", headers=auth)
            print("GOT", conn.getresponse().read().decode().strip())
    elif kind == "scan":  # the real value: nowhere the program can look
        # Given its first half, its length and its digest only (the value itself, given here,
        # would be in this process's memory): a leak is the half followed by the right rest.
        import hashlib
        half, length, digest = target.split(":")
        needle_half, length = half.encode(), int(length)
        def leaks(data):
            at = data.find(needle_half)
            while at >= 0:
                if hashlib.sha256(data[at : at + length]).hexdigest() == digest:
                    return True
                at = data.find(needle_half, at + 1)
            return False
        where = []
        if leaks(repr(dict(os.environ)).encode()):
            where.append("os.environ")
        if leaks(open("/proc/self/environ", "rb").read()):
            where.append("/proc/self/environ")
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
            for line in maps:
                span, perms = line.split()[:2]
                if not perms.startswith("r") or "[vvar" in line or "[vsyscall" in line:
                    continue
                lo, hi = (int(x, 16) for x in span.split("-"))
                try:
                    mem.seek(lo)
                    if leaks(mem.read(hi - lo)):
                        where.append("memory " + line.strip())
                except (OSError, ValueError, OverflowError):
                    pass
        for top in {os.environ.get("TMPDIR", "/tmp"), "/tmp", os.getcwd(), "/etc"}:
            for root, _dirs, files in os.walk(top):
                for name in files:
                    path = os.path.join(root, name)
                    try:
                        if leaks(open(path, "rb").read()):
                            where.append(path)
                    except OSError:
                        pass
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if leaks(open(f"/proc/{pid}/environ", "rb").read()):
                        where.append(f"/proc/{pid}/environ")
                except OSError:
                    pass
        print("GOT", "CLEAN" if not where else "LEAK " + ", ".join(where))
    elif kind == "env":
        print("GOT", os.environ.get("HTTPS_PROXY"), os.environ.get("NO_PROXY"))
except (OSError, http.client.HTTPException) as exc:
    print("REFUSED", type(exc).__name__, exc)
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with other_machine(tmp_path_factory.mktemp("edge")) as found:
        yield found


def needs(provider: str) -> None:
    provider_ok(provider)
    require_tool("pasta", "passt")
    require_tool("nft", "nftables")
    require(shutil.which("curl"), "curl is not installed")


def sandboxed(
    world: World,
    project: Path,
    home: Path,
    provider: str,
    rules: list[str],
    *args: str,
    python_layer: bool = False,
    extra: tuple[str, ...] = (),
    environ: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python-sb client.py ARGS`` under ``rules``, in a mount namespace whose /etc/hosts
    names the two servers."""

    (project / ".py-sandboxes").write_text("# the rules come from the command line\n")
    (project / "client.py").write_text(CLIENT)
    shutil.copy(world.ca, project / "ca.pem")
    command = [
        PYTHON_SB,
        f"--os-sandbox={provider}",
        f"--py-sandbox={'true' if python_layer else 'false'}",
        f"--expose-ro={project}",
        "--python-import=*",
        *(f"--net={rule}" for rule in rules),
        *extra,
        "client.py",
        *args,
    ]
    return subprocess.run(
        in_world(world, command),
        cwd=project,
        env=base_env(home, environ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


GRANT = "ALLOW|TCP|granted.test|8443,8080|OUT"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("python_layer", [False, True])
def test_granted_host_by_name_and_refused_host(
    provider: str, python_layer: bool, world: World, project: Path, home: Path
) -> None:
    """A client honouring HTTPS_PROXY (urllib) reaches the granted host by name; the refused
    host gets nothing, and the refusal names the host, says no rule allows it and that another
    route is refused too, in the program and in --denials."""

    needs(provider)
    denials = project / "denials.jsonl"
    ok = sandboxed(
        world, project, home, provider, [GRANT], "urllib", "https://granted.test:8443/ok",
        python_layer=python_layer,
    )  # fmt: skip
    assert ok.stdout == "GOT hello from granted\n", ok.stderr
    before = world.requests()
    refused = sandboxed(
        world, project, home, provider, [GRANT], "urllib", "https://refused.test:8443/no",
        python_layer=python_layer, extra=(f"--denials={denials}",),
    )  # fmt: skip
    assert refused.stdout.startswith("REFUSED"), refused.stdout + refused.stderr
    assert "[refused.test]:8443 DENIED: no net= rule allows it" in refused.stdout
    assert "retrying another way is refused too" in refused.stdout
    assert world.requests() == before  # nothing reached the refused host
    lines = [json.loads(line) for line in denials.read_text().splitlines()]
    assert {(d["kind"], d["target"], d["rule"], d["suggestion"], d["enforcer"]) for d in lines} == {
        ("net", "[refused.test]:8443", None, "net=ALLOW|TCP|refused.test|8443|OUT", "edge-proxy")
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_sandbox_is_told_of_the_proxy(
    provider: str, world: World, project: Path, home: Path
) -> None:
    needs(provider)
    result = sandboxed(world, project, home, provider, [GRANT], "env", "-")
    assert result.stdout == "GOT http://127.0.0.1:3128 localhost,127.0.0.1,::1\n", result.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_deny_by_name_wins(provider: str, world: World, project: Path, home: Path) -> None:
    """``ALLOW *`` beside ``DENY refused.test``: the DENY wins, named in the refusal."""

    needs(provider)
    rules = ["ALLOW|TCP|*|8443|OUT", "DENY|TCP|refused.test|*|OUT"]
    ok = sandboxed(world, project, home, provider, rules, "urllib", "https://granted.test:8443/")
    assert ok.stdout == "GOT hello from granted\n", ok.stderr
    before = world.requests()
    for kind, target in (
        ("urllib", "https://refused.test:8443/"),
        ("direct-tls", "refused.test:8443"),
    ):
        result = sandboxed(world, project, home, provider, rules, kind, target)
        assert result.stdout.startswith("REFUSED"), (kind, result.stdout, result.stderr)
        if kind == "urllib":
            assert "DENIED by explicit rule 'net=DENY|TCP|refused.test|*|OUT'" in result.stdout
    assert world.requests() == before


@pytest.mark.parametrize("provider", PROVIDERS)
def test_literal_address_is_judged_by_address_rules(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """A connection to the granted host's own address, naming no host, is not granted by the
    name rule (the proxy judges the name, not the addresses it had at start); an address rule
    grants it."""

    needs(provider)
    before = world.requests()
    url = f"https://{world.granted}:8443/literal"
    refused = sandboxed(world, project, home, provider, [GRANT], "urllib", url)
    assert refused.stdout.startswith("REFUSED"), refused.stdout + refused.stderr
    assert f"[{world.granted}]:8443 DENIED: no net= rule allows it" in refused.stdout
    assert world.requests() == before
    rules = [GRANT, f"ALLOW|TCP|{world.granted}|8443|OUT"]
    allowed = sandboxed(world, project, home, provider, rules, "urllib", url)
    assert allowed.stdout == "GOT hello from granted\n", allowed.stderr


@pytest.mark.parametrize("provider", TRANSPARENT)
def test_lying_host_reaches_only_the_named_host(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """Plain HTTP sent to the refused host's address with ``Host: granted.test``: the proxy
    connects to granted.test (the lie gains nothing); ``Host: refused.test`` is refused with
    an HTTP 403 naming it."""

    needs(provider)
    before = world.requests()
    lie = sandboxed(
        world, project, home, provider, [GRANT], "lying-host", f"{world.refused}:8080:granted.test"
    )
    assert lie.stdout == "GOT hello from granted\n", lie.stdout + lie.stderr
    honest = sandboxed(
        world, project, home, provider, [GRANT], "lying-host", f"{world.refused}:8080:refused.test"
    )
    assert honest.stdout.startswith("GOT HTTP/1.1 403 Connection to [refused.test]:8080 DENIED")
    assert [line.split()[0] for line in world.requests()[len(before) :]] == ["granted"]


@pytest.mark.parametrize("provider", TRANSPARENT)
def test_client_ignoring_proxy_variables_is_redirected(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """http.client never reads HTTPS_PROXY: its connection is redirected to the proxy inside
    the sandbox's namespace and judged by the TLS server name."""

    needs(provider)
    ok = sandboxed(world, project, home, provider, [GRANT], "direct-tls", "granted.test:8443")
    assert ok.stdout == "GOT hello from granted\n", ok.stderr
    assert world.requests()[-1] == "granted granted.test:8443 /direct"
    before = world.requests()
    rules = [GRANT, "ALLOW|TCP|refused.test|8080|OUT"]  # another port of refused.test only
    refused = sandboxed(world, project, home, provider, rules, "direct-tls", "refused.test:8443")
    assert refused.stdout.startswith("REFUSED"), refused.stdout + refused.stderr
    assert world.requests() == before


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("client", ["requests", "httpx", "httpx-direct"])
def test_requests_and_httpx_clients(
    provider: str, client: str, world: World, project: Path, home: Path
) -> None:
    """requests and httpx in the sandbox (through HTTPS_PROXY, which both honour; httpx with
    ``trust_env=False`` ignores it and is redirected, judged by the TLS server name): the
    granted host answers, the refused host gets nothing and the refusal names it."""

    import importlib.util

    needs(provider)
    module = client.split("-")[0]
    require(importlib.util.find_spec(module), f"{module} is not installed (pip install -e .[dev])")
    ok = sandboxed(world, project, home, provider, [GRANT], client, "https://granted.test:8443/c")
    assert ok.stdout == "GOT hello from granted\n", ok.stdout + ok.stderr
    assert world.requests()[-1] == "granted granted.test:8443 /c"
    before = world.requests()
    refused = sandboxed(
        world, project, home, provider, [GRANT], client, "https://refused.test:8443/c"
    )
    assert refused.stdout.startswith("REFUSED"), refused.stdout + refused.stderr
    if client != "httpx-direct":  # a redirected TLS connection gets an alert, not a message
        assert "[refused.test]:8443 DENIED" in refused.stdout, refused.stdout
    assert world.requests() == before


CURL = r"""
import os, subprocess, sys
ca = os.path.join(os.path.dirname(__file__), "ca.pem")
for url in sys.argv[2:]:
    run = subprocess.run(["curl", "-sS", "--cacert", ca, url], capture_output=True, text=True)
    print(run.returncode, run.stdout.strip() or run.stderr.strip())
"""


@pytest.mark.parametrize("provider", PROVIDERS)
def test_curl_as_a_child(provider: str, world: World, project: Path, home: Path) -> None:
    """curl (a child process, honouring HTTPS_PROXY): the granted host answers; the refused
    host's CONNECT gets the 403."""

    needs(provider)
    before = world.requests()
    (project / ".py-sandboxes").write_text("# the rules come from the command line\n")
    (project / "curl.py").write_text(CURL)
    shutil.copy(world.ca, project / "ca.pem")
    command_result = subprocess.run(
        in_world(
            world,
            [
                PYTHON_SB,
                f"--os-sandbox={provider}",
                "--py-sandbox=false",
                f"--expose-ro={project}",
                f"--net={GRANT}",
                "curl.py",
                "x",
                "https://granted.test:8443/curl",
                "https://refused.test:8443/curl",
            ],
        ),
        cwd=project,
        env=base_env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = command_result.stdout.splitlines()
    assert lines[0] == "0 hello from granted", command_result.stdout + command_result.stderr
    assert lines[1].startswith("56 "), lines  # CONNECT refused by the proxy (403)
    assert [line.split()[0] for line in world.requests()[len(before) :]] == ["granted"]


def test_landlock_runs_the_proxy_for_clients_honouring_proxy_variables(
    world: World, project: Path, home: Path
) -> None:
    """Under landlock (no network namespace) with the Python layer on: the proxy runs on the
    host's loopback, and clients honouring HTTPS_PROXY (urllib here; curl below) are judged by
    host name there; the refusal is the proxy's."""

    provider_ok("landlock")
    ok = sandboxed(
        world, project, home, "landlock", [GRANT], "urllib", "https://granted.test:8443/ll",
        python_layer=True,
    )  # fmt: skip
    assert ok.stdout == "GOT hello from granted\n", ok.stdout + ok.stderr
    before = world.requests()
    refused = sandboxed(
        world, project, home, "landlock", [GRANT], "urllib", "https://refused.test:8443/ll",
        python_layer=True,
    )  # fmt: skip
    assert "[refused.test]:8443 DENIED: no net= rule allows it" in refused.stdout, refused.stderr
    assert "retrying another way is refused too" in refused.stdout
    assert world.requests() == before
    (project / "curl.py").write_text(CURL)
    curl = subprocess.run(
        in_world(world, [
            PYTHON_SB,
            "--os-sandbox=landlock", "--py-sandbox=true", f"--expose-ro={project}",
            "--python-import=*", "--python-api=ALLOW:*", "--expose-ro=/usr/bin/curl",
            f"--net={GRANT}", "curl.py", "x",
            "https://granted.test:8443/ll-curl", "https://refused.test:8443/ll-curl",
        ]),
        cwd=project, env=base_env(home), capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    lines = curl.stdout.splitlines()
    assert lines[:1] == ["0 hello from granted"], curl.stdout + curl.stderr
    assert lines[1].startswith("56 "), lines


SECRET_VALUE = "real-token-0123456789abcdef"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_secret_is_substituted_only_for_its_host_and_never_visible(
    provider: str, world: World, project: Path, home: Path
) -> None:
    """``secret=TOKEN|granted.test|Authorization``: the program's TOKEN is a placeholder; a
    request to granted.test (through HTTPS_PROXY, and redirected) arrives with the real value
    in that header; one to another allowed host with the placeholder; the value is in no place
    the program can read (its environment, its memory, the files it sees, /proc)."""

    needs(provider)
    rules = [GRANT, "ALLOW|TCP|refused.test|8443|OUT"]
    secret = "--secret=TOKEN|granted.test|Authorization"
    # python-sb's environment holds the real value; its edge proxy verifies the servers with
    # the test's CA (the program trusts the run's CA, through SSL_CERT_FILE in the sandbox).
    environ = {"TOKEN": SECRET_VALUE, "SSL_CERT_FILE": str(world.ca)}
    before = len(world.requests())
    for kind, target in (
        ("secret-proxy", "granted.test:8443"),
        ("secret-direct", "granted.test:8443"),
        ("secret-proxy", "refused.test:8443"),
    ):
        result = sandboxed(
            world, project, home, provider, rules, kind, target,
            extra=(secret,), environ=environ,
        )  # fmt: skip
        assert result.stdout.startswith("GOT hello from"), (kind, result.stdout, result.stderr)
    seen = world.requests()[before:]
    assert seen[0] == f"granted granted.test:8443 /secret Bearer {SECRET_VALUE}"
    assert seen[1] == f"granted granted.test:8443 /secret-direct Bearer {SECRET_VALUE}"
    assert seen[2].startswith("refused refused.test:8443 /secret Bearer pysb-secret-TOKEN-")
    import hashlib

    digest = hashlib.sha256(SECRET_VALUE.encode()).hexdigest()
    half = SECRET_VALUE[: len(SECRET_VALUE) // 2]
    scan = sandboxed(
        world, project, home, provider, rules, "scan", f"{half}:{len(SECRET_VALUE)}:{digest}",
        extra=(secret,), environ=environ,
    )  # fmt: skip
    assert scan.stdout == "GOT CLEAN\n", scan.stdout + scan.stderr
    # The control: the same scan finds the value when an env= rule passes it in.
    control = sandboxed(
        world, project, home, provider, rules, "scan", f"{half}:{len(SECRET_VALUE)}:{digest}",
        extra=("--env=TOKEN=${TOKEN}",), environ=environ,
    )  # fmt: skip
    assert control.stdout.startswith("GOT LEAK os.environ, /proc/self/environ, memory")


def test_secret_needs_a_namespace_provider(world: World, project: Path, home: Path) -> None:
    result = sandboxed(
        world, project, home, "subprocess", [GRANT], "env", "-", python_layer=True,
        extra=("--secret=TOKEN|granted.test|Authorization",), environ={"TOKEN": "x"},
    )  # fmt: skip
    assert result.returncode == 2
    assert "secrets need os-sandbox=bwrap or unshare" in result.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_proxy_ends_with_python_sb_even_killed(
    provider: str, project: Path, home: Path, tmp_path: Path
) -> None:
    """Like pasta, the edge proxy is python-sb's helper: it ends when python-sb is SIGKILLed
    (end-of-file on the pipe only python-sb held)."""

    from tests.e2e.test_bwrap_network import helpers_of, wait_no_helpers

    needs(provider)
    helper_tmp = tmp_path / "helper-tmp"
    helper_tmp.mkdir()
    (project / ".py-sandboxes").write_text("# the rules come from the command line\n")
    (project / "wait.py").write_text("import time\nprint('ready', flush=True)\ntime.sleep(600)\n")
    proc = subprocess.Popen(
        [
            PYTHON_SB, f"--os-sandbox={provider}", "--py-sandbox=false",
            f"--expose-ro={project}", "--net=ALLOW|TCP|localhost|9|OUT", "wait.py",
        ],
        cwd=project, env=base_env(home, {"TMPDIR": str(helper_tmp)}),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    assert any("edge_proxy" in line for line in helpers_of(helper_tmp)), helpers_of(helper_tmp)
    proc.kill()
    proc.wait(timeout=30)
    assert wait_no_helpers(helper_tmp) == []


REFUSED_CONNECTS = r"""
import socket, sys
port = int(sys.argv[1])
for kind, family, address, to in (
    ("tcp", socket.AF_INET6, "::1", port),  # forwarded for IPv4 only
    ("tcp", socket.AF_INET, "192.0.2.1", 443),  # no rule names it
    ("udp", socket.AF_INET, "192.0.2.1", 9),
):
    kind_of = socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM
    with socket.socket(family, kind_of) as sock:
        sock.settimeout(30)  # only against a hang: a refusal comes at once
        try:
            if kind == "tcp":
                sock.connect((address, to))
            else:
                sock.sendto(b"x", (address, to))
            print(kind, address, "sent")
        except OSError as exc:
            print(kind, address, type(exc).__name__)
"""


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refused_connect_fails_at_once(provider: str, project: Path, home: Path) -> None:
    """The ruleset refuses TCP going out with a reset, not a silent drop: a connect() no rule
    allows fails with ECONNREFUSED instead of retrying its SYN until a timeout (a dropped SYN
    is sent again and again: the program hung for minutes). To another machine on a port no
    rule names, and to the sandbox's ``::1`` on a port a rule forwards to the host's
    ``127.0.0.1`` only; a refused UDP send still fails with EPERM. The socket timeout (30 s)
    only guards against a hang: the assertion is the kind of error."""

    import socket as sockets

    provider_ok(provider)
    require_tool("pasta", "passt")
    require_tool("nft", "nftables")
    with sockets.socket() as server:  # the host's service: 127.0.0.1 only
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        (project / ".py-sandboxes").write_text(f"net=ALLOW|TCP|127.0.0.1|{port}|OUT\n")
        (project / "refused.py").write_text(REFUSED_CONNECTS)
        result = subprocess.run(
            [
                PYTHON_SB, f"--os-sandbox={provider}", "--py-sandbox=false",
                f"--expose-ro={project}", "refused.py", str(port),
            ],
            cwd=project, env=base_env(home), capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip
    assert result.stdout.splitlines() == [
        "tcp ::1 ConnectionRefusedError",
        "tcp 192.0.2.1 ConnectionRefusedError",
        "udp 192.0.2.1 PermissionError",
    ], result.stdout + result.stderr
