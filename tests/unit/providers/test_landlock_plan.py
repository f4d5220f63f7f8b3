"""The Landlock plan: ABI negotiation, path grants and the translation of net= rules.

Pure functions over policies parsed by the real rule parser; applying plans is tested in
``test_landlock_apply.py`` against the running kernel.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy import parse_text
from pysandboxes.policy.model import Origin, Policy, RuleLine
from pysandboxes.providers import landlock as ll


def policy(tmp_path: Path, *lines: str, py_sandbox: bool = False) -> Policy:
    text = "\n".join([f"py-sandbox={'true' if py_sandbox else 'false'}", *lines, ""])
    return parse_text(text, str(tmp_path / ".py-sandboxes"), cwd=str(tmp_path), environ={})


def plan(tmp_path: Path, *lines: str, py_sandbox: bool = False, abi: int = 7) -> ll.Plan:
    return ll.build_plan(policy(tmp_path, *lines, py_sandbox=py_sandbox), abi=abi)


# -- ABI negotiation ----------------------------------------------------------------------------


def test_rights_grow_with_each_abi_version() -> None:
    assert ll.rights_for_abi(0) == ll.Rights(0, 0, 0)
    one = ll.rights_for_abi(1)
    assert one.fs == (1 << 13) - 1 and one.net == 0 and one.scoped == 0
    assert ll.rights_for_abi(2).fs == one.fs | ll.FS_REFER
    assert ll.rights_for_abi(3).fs == one.fs | ll.FS_REFER | ll.FS_TRUNCATE
    four = ll.rights_for_abi(4)
    assert four.net == ll.NET_BIND_TCP | ll.NET_CONNECT_TCP and four.scoped == 0
    assert ll.rights_for_abi(5).fs & ll.FS_IOCTL_DEV
    six = ll.rights_for_abi(6)
    assert six.scoped == ll.SCOPE_ABSTRACT_UNIX_SOCKET | ll.SCOPE_SIGNAL
    # A newer kernel gets everything this version knows, nothing it does not.
    assert ll.rights_for_abi(9) == ll.rights_for_abi(7) == six


def test_read_only_and_read_write_rights() -> None:
    assert ll.RIGHTS_RO == ll.FS_READ_FILE | ll.FS_READ_DIR | ll.FS_EXECUTE
    for right in (ll.FS_WRITE_FILE, ll.FS_REFER, ll.FS_TRUNCATE, ll.FS_MAKE_REG, ll.FS_REMOVE_FILE):
        assert ll.RIGHTS_RW & right and not ll.RIGHTS_RO & right
    # Device nodes are never created in a sandbox, even in a writable exposure.
    assert not ll.RIGHTS_RW & (ll.FS_MAKE_CHAR | ll.FS_MAKE_BLOCK)


# -- files ----------------------------------------------------------------------------------------


def test_exposures_and_defaults_become_grants(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir()
    (tmp_path / "rw").mkdir()
    result = ll.build_plan(
        policy(tmp_path, f"expose-ro={tmp_path}/ro", f"expose-rw={tmp_path}/rw"),
        abi=7,
        tmpdir=str(tmp_path / "tmp"),
        prefixes=("/usr/local/lib/python3.11",),
        executables=("/usr/bin/python3",),
    )
    grants = {g.path: g for g in result.paths}
    assert grants[f"{tmp_path}/ro"].rights == ll.RIGHTS_RO and grants[f"{tmp_path}/ro"].required
    assert grants[f"{tmp_path}/rw"].rights == ll.RIGHTS_RW
    assert grants[str(tmp_path / "tmp")].rights == ll.RIGHTS_RW
    assert grants["/usr/local/lib/python3.11"].rights == ll.RIGHTS_RO
    assert grants["/usr/bin/python3"].rights == ll.RIGHTS_RO
    for needed in (
        "/etc/ld.so.cache",
        "/etc/resolv.conf",
        "/etc/hosts",
        "/etc/ssl/certs",
        "/etc/mime.types",
        "/dev/null",
    ):
        assert needed in grants
    # Certificates, never the private keys beside them (issue 11, point 2).
    assert not any(path in grants for path in ("/etc/ssl", "/etc/ssl/private", "/etc/pki"))
    # written by any user (mixes data into the entropy pool): every enforcer lets it be
    assert grants["/dev/urandom"].rights == ll.FS_READ_FILE | ll.FS_WRITE_FILE


def test_denials_file_is_writable_alone(tmp_path: Path) -> None:
    result = ll.build_plan(policy(tmp_path), abi=7, denials_file=str(tmp_path / "d.jsonl"))
    grant = next(g for g in result.paths if g.path == str(tmp_path / "d.jsonl"))
    assert grant.rights == ll.FS_WRITE_FILE and grant.required
    assert str(tmp_path) not in {g.path for g in result.paths}


def test_system_grants_are_not_wholesale(tmp_path: Path) -> None:
    result = ll.build_plan(policy(tmp_path), abi=7, prefixes=("/usr", "/usr/local", "/"))
    paths = {g.path for g in result.paths}
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert f"/usr/lib/{version}" in paths and f"/usr/local/lib/{version}" in paths
    for broad in ("/", "/etc", "/tmp", "/var", "/home", "/root", "/usr", "/dev", "/proc", "/run"):
        assert broad not in paths
    # The interpreter running the tests and python-sb's own package may live below /tmp or
    # /home (a CI checkout with its virtual environment): they are granted by design (the child
    # runs python-sb's bootstrap), nothing else there.
    package = os.path.dirname(os.path.dirname(ll.__file__))
    own = tuple(
        os.path.realpath(p).rstrip("/") + "/" for p in {sys.prefix, sys.base_prefix, package}
    )
    outside = [p for p in paths if not (p + "/").startswith(own)]
    assert not any(p.startswith(("/tmp/", "/home/", "/root/", "/run/", "/var/")) for p in outside)
    assert "/etc/shadow" not in paths and "/etc/gshadow" not in paths


def test_ignore_and_rule_files_in_writable_exposure_are_noted(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("x")
    result = plan(tmp_path, f"expose-rw={tmp_path}", f"ignore={tmp_path}/secret")
    notes = "\n".join(result.unenforced)
    assert "ignore=" in notes and "NOT enforced" in notes
    assert ".py-sandboxes" in notes and "NOT protected" in notes
    on = plan(tmp_path, f"expose-rw={tmp_path}", f"ignore={tmp_path}/secret", py_sandbox=True)
    assert "Python layer only" in "\n".join(on.unenforced)


def test_missing_include_in_writable_exposure_is_noted(tmp_path: Path) -> None:
    result = plan(tmp_path, f"expose-rw={tmp_path}", 'include "./.local.py-sandboxes"')
    notes = "\n".join(result.unenforced)
    assert f"{tmp_path}/.local.py-sandboxes does not exist" in notes and "NOT refused" in notes
    read_only = plan(tmp_path, f"expose-ro={tmp_path}", 'include "./.local.py-sandboxes"')
    assert "does not exist" not in "\n".join(read_only.unenforced)


# -- TCP ------------------------------------------------------------------------------------------


def test_no_net_rule_refuses_all_tcp(tmp_path: Path) -> None:
    result = plan(tmp_path)
    assert result.connect == () and result.bind == ()
    assert not result.allow_udp and not result.allow_unix


def test_ports_from_allow_rules(tmp_path: Path) -> None:
    result = plan(
        tmp_path,
        "net=ALLOW|TCP|*|443,8000-8002|OUT",
        "net=ALLOW|*|*|80|OUT",
        "net=ALLOW|TCP|*|9000|IN",
        "net=ALLOW|UDP|*|53|IN",  # UDP does not open TCP ports
        py_sandbox=True,
    )
    # 9000: the program's own server (a loopback connection to a port an IN rule lets it bind
    # belongs to that grant, issue 11 point 10), granted to connect on every host (announced).
    assert result.connect == ((80, 80), (443, 443), (8000, 8002), (9000, 9000))
    assert result.bind == ((9000, 9000),)


def test_allow_every_port_leaves_tcp_unrestricted(tmp_path: Path) -> None:
    result = plan(tmp_path, "net=ALLOW|TCP|*|*|OUT")
    assert result.connect is None and result.bind == ()
    both = plan(tmp_path, "net=ALLOW|TCP|*|*|*")
    assert both.connect is None and both.bind is None


def test_deny_for_every_host_removes_ports(tmp_path: Path) -> None:
    result = plan(tmp_path, "net=ALLOW|TCP|*|*|OUT", "net=DENY|TCP|*|25|OUT")
    assert result.connect == ((0, 24), (26, 65535))


def test_host_specific_allow_refused_without_python_layer(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        plan(tmp_path, "net=ALLOW|TCP|10.0.0.1|443|OUT")
    assert "10.0.0.1" in str(info.value) and "py-sandbox=false" in str(info.value)
    # The same port allowed for every host as well: nothing is over-granted.
    ok = plan(tmp_path, "net=ALLOW|TCP|10.0.0.1|443|OUT", "net=ALLOW|TCP|*|443|OUT")
    assert ok.connect == ((443, 443),)


def test_host_specific_allow_with_python_layer_is_granted_and_noted(tmp_path: Path) -> None:
    result = plan(tmp_path, "net=ALLOW|TCP|api.example.com|443|OUT", py_sandbox=True)
    assert result.connect == ((443, 443),)
    assert any("host part" in note for note in result.unenforced)


def test_host_deny_on_open_port_refused_without_python_layer(tmp_path: Path) -> None:
    rules = ("net=ALLOW|TCP|*|443|OUT", "net=DENY|*|10.0.0.0/8|*|OUT")
    with pytest.raises(ConfigError) as info:
        plan(tmp_path, *rules)
    assert "10.0.0.0/8" in str(info.value)
    assert plan(tmp_path, *rules, py_sandbox=True).connect == ((443, 443),)
    # A host DENY on ports nothing opens is enforced by Landlock as it is.
    assert plan(tmp_path, "net=DENY|*|10.0.0.0/8|*|OUT").connect == ()


def test_old_abi_without_tcp_rules(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot restrict TCP"):
        plan(tmp_path, abi=3)
    noted = plan(tmp_path, abi=3, py_sandbox=True)
    assert any("cannot restrict TCP" in n for n in noted.unenforced)
    assert plan(tmp_path, "net=ALLOW|TCP|*|*|*", abi=3).connect is None


def test_old_abi_without_scopes_is_noted(tmp_path: Path) -> None:
    assert any("no scopes" in n for n in plan(tmp_path, abi=5).unenforced)
    assert not any("no scopes" in n for n in plan(tmp_path, abi=6).unenforced)


# -- UDP and Unix sockets -------------------------------------------------------------------------


def test_udp_all_or_nothing_without_python_layer(tmp_path: Path) -> None:
    assert not plan(tmp_path, "net=ALLOW|TCP|*|443|OUT").allow_udp
    full = plan(tmp_path, "net=ALLOW|UDP|*|*|OUT")
    assert full.allow_udp and any("UDP IN" in n for n in full.unenforced)
    assert not any("UDP IN" in n for n in plan(tmp_path, "net=ALLOW|UDP|*|*|*").unenforced)
    for partial in (
        "net=ALLOW|UDP|*|53|OUT",
        "net=ALLOW|UDP|1.1.1.1|*|OUT",
        "net=ALLOW|UDP|*|*|IN",
    ):
        with pytest.raises(ConfigError, match="UDP"):
            plan(tmp_path, partial)
    with pytest.raises(ConfigError, match="UDP"):
        plan(tmp_path, "net=ALLOW|*|*|*|OUT", "net=DENY|UDP|*|123|OUT")


def test_udp_allowed_for_dns_with_python_layer(tmp_path: Path) -> None:
    assert plan(tmp_path, "net=ALLOW|TCP|example.com|443|OUT", py_sandbox=True).allow_udp
    assert not plan(tmp_path, py_sandbox=True).allow_udp
    assert not plan(tmp_path, "net=ALLOW|TCP|*|8080|IN", py_sandbox=True).allow_udp


def test_unix_sockets_parameter(tmp_path: Path) -> None:
    base = policy(tmp_path)

    def with_param(value: str) -> Policy:
        line = RuleLine("landlock.unix-sockets", value, Origin(str(tmp_path / "f"), 3))
        return Policy(py_sandbox=base.py_sandbox, provider_params=(line,))

    assert ll.build_plan(with_param("true"), abi=7).allow_unix
    assert not ll.build_plan(with_param("false"), abi=7).allow_unix
    with pytest.raises(ConfigError, match="unix-sockets"):
        ll.build_plan(with_param("sometimes"), abi=7)


# -- port sets ------------------------------------------------------------------------------------


def test_port_set_arithmetic() -> None:
    assert ll._normalise([(5, 9), (1, 3), (4, 4), (20, 20)]) == ((1, 9), (20, 20))
    assert ll._subtract(((1, 10),), ((3, 4), (9, 12))) == ((1, 2), (5, 8))
    assert ll._subtract(ll.ALL_PORTS, ll.ALL_PORTS) == ()
    assert ll._intersect(((1, 10),), ((5, 20),)) == ((5, 10),)
    assert ll.format_ports(((1, 2), (7, 7))) == "1-2,7"
    assert ll.format_ports(()) == "none"


def test_wildcard_bind_in_rule_is_a_port_grant(tmp_path: Path) -> None:
    """For IN, HOST is the bound address (SPEC §2.4): the seed's MCP example
    ``net=ALLOW|TCP|0.0.0.0/32|8000|IN`` is the wildcard bind, every interface -- what
    Landlock's port grant gives -- so it is enforced without the Python layer too; a bind
    address Landlock cannot tell apart (127.0.0.1) still is not."""

    result = plan(tmp_path, "net=ALLOW|TCP|0.0.0.0/32|8000|IN", "net=ALLOW|TCP|::/128|8001|IN")
    # connect: the own-server ports (issue 11 point 10), every host.
    assert result.bind == ((8000, 8001),) and result.connect == ((8000, 8001),)
    with pytest.raises(ConfigError):
        plan(tmp_path, "net=ALLOW|TCP|127.0.0.1|8000|IN")
    # For OUT, 0.0.0.0 is a peer (the local host), not "every host".
    with pytest.raises(ConfigError):
        plan(tmp_path, "net=ALLOW|TCP|0.0.0.0/32|8000|OUT")


# -- issue 11, point 1: an expose-ro below an expose-rw stays read-only ---------------------------


def _writable_above(result: ll.Plan, path: str) -> list[ll.PathGrant]:
    """Grants whose write rights would reach ``path`` (Landlock rights are inherited)."""

    return [
        g
        for g in result.paths
        if g.rights & (ll.FS_WRITE_FILE | ll.FS_MAKE_REG | ll.FS_REMOVE_FILE | ll.FS_TRUNCATE)
        and (path == g.path or path.startswith(g.path.rstrip("/") + "/"))
    ]


def test_read_only_directory_below_writable_gets_no_write_right(tmp_path: Path) -> None:
    rw = tmp_path / "proj"
    (rw / "ro" / "deep").mkdir(parents=True)
    (rw / "src").mkdir()
    (rw / "notes.txt").write_text("n")
    (rw / "ro" / "f").write_text("f")
    result = plan(tmp_path, f"expose-rw={rw}", f"expose-ro={rw}/ro")
    assert _writable_above(result, f"{rw}/ro") == []
    assert _writable_above(result, f"{rw}/ro/deep/x") == []
    grants = {g.path: g for g in result.paths}
    # The writable directory keeps read rights; its other entries get its write rights.
    assert grants[str(rw)].rights == ll.RIGHTS_RO
    assert grants[f"{rw}/src"].rights == ll.RIGHTS_RW and not grants[f"{rw}/src"].follow
    assert grants[f"{rw}/notes.txt"].rights == ll.RIGHTS_RW & ll.FS_FILE_RIGHTS
    assert grants[f"{rw}/ro"].rights == ll.RIGHTS_RO
    assert any("lies below 'expose-rw=" in note for note in result.announced)


def test_read_only_file_below_writable_and_deeper_chain(tmp_path: Path) -> None:
    rw = tmp_path / "proj"
    (rw / "a" / "b").mkdir(parents=True)
    (rw / "a" / "b" / "keep.cfg").write_text("k")
    (rw / "a" / "b" / "other").write_text("o")
    (rw / "a" / "sibling").mkdir()
    (rw / "top").mkdir()
    (rw / "link").symlink_to("/etc")
    result = plan(tmp_path, f"expose-rw={rw}", f"expose-ro={rw}/a/b/keep.cfg")
    assert _writable_above(result, f"{rw}/a/b/keep.cfg") == []
    grants = {g.path: g for g in result.paths}
    assert grants[str(rw)].rights == ll.RIGHTS_RO
    for ancestor in (rw, rw / "a", rw / "a" / "b"):
        writable = [g for g in result.paths if g.rights & ll.FS_WRITE_FILE]
        assert not any(g.path == str(ancestor) for g in writable)
    for entry in ("a/b/other", "a/sibling", "top"):
        assert grants[f"{rw}/{entry}"].rights & ll.FS_WRITE_FILE
    # A symbolic link is not followed into a grant (its target is judged on its own).
    assert f"{rw}/link" not in grants


def test_same_path_in_both_lists_stays_read_write(tmp_path: Path) -> None:
    (tmp_path / "d" / "x").mkdir(parents=True)
    result = plan(tmp_path, f"expose-rw={tmp_path}/d", f"expose-ro={tmp_path}/d")
    grants = [g for g in result.paths if g.path == f"{tmp_path}/d"]
    assert any(g.rights == ll.RIGHTS_RW for g in grants)
    assert not any("lies below" in note for note in result.announced)


def test_split_too_large_is_refused_naming_both_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rw = tmp_path / "proj"
    (rw / "ro").mkdir(parents=True)
    for index in range(5):
        (rw / f"f{index}").write_text("x")
    monkeypatch.setattr(ll, "MAX_SPLIT_ENTRIES", 3)
    with pytest.raises(ConfigError) as caught:
        plan(tmp_path, f"expose-rw={rw}", f"expose-ro={rw}/ro")
    message = str(caught.value)
    assert f"expose-ro={rw}/ro" in message and f"expose-rw={rw}" in message


# -- the program's own server (issue 11 point 10) ------------------------------------------------


def _ephemeral() -> tuple[int, int]:
    low, high = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    return low, high


def test_own_server_ports_are_granted_to_connect_and_announced(tmp_path: Path) -> None:
    low, high = _ephemeral()
    result = plan(
        tmp_path,
        "net=ALLOW|TCP|127.0.0.1|0|IN",
        "net=ALLOW|TCP|0.0.0.0/32|8000|IN",
        "net=ALLOW|TCP|192.0.2.7|8100|IN",  # not a loopback bind: no connect grant
        "net=ALLOW|TCP|*|*|IN",  # every port: no connect grant (it would be every host's)
        "net=ALLOW|TCP|*|443|OUT",
        py_sandbox=True,
    )
    assert result.connect == ((443, 443), (8000, 8000), (low, high))
    said = [note for note in result.announced + result.unenforced if "own server" in note]
    assert len(said) == 1, result
    assert f"8000,{low}-{high}" in said[0] and "ephemeral" in said[0]
    assert "every host" in said[0] and "Python layer allows" in said[0]


def test_own_server_ports_lose_what_a_deny_takes(tmp_path: Path) -> None:
    result = plan(
        tmp_path,
        "net=ALLOW|TCP|0.0.0.0/32|8000,8001|IN",
        "net=DENY|TCP|*|8001|OUT",
    )
    assert result.connect == ((8000, 8000),)
    # A DENY of a host on an own-server port: Landlock cannot refuse the host alone, so the
    # port is not granted to connect (said), rather than refusing a file that ran before.
    result = plan(
        tmp_path,
        "net=ALLOW|TCP|0.0.0.0/32|8000,8001|IN",
        "net=DENY|TCP|10.0.0.0/8|8001|OUT",
    )
    assert result.connect == ((8000, 8000),) and result.bind == ((8000, 8001),)
    said = [note for note in result.announced + result.unenforced if "cannot refuse one" in note]
    assert len(said) == 1 and "port(s) 8001" in said[0], result
    # With the Python layer on, it enforces the DENY: the port is granted.
    layered = plan(
        tmp_path,
        "net=ALLOW|TCP|0.0.0.0/32|8000,8001|IN",
        "net=DENY|TCP|10.0.0.0/8|8001|OUT",
        py_sandbox=True,
    )
    assert layered.connect == ((8000, 8001),)
