"""The mount plan shared by bwrap and unshare (``_ns_mounts``), and its bubblewrap options.

Pure: builds plans over a real temporary tree and checks what would be mounted, in which order.
What the kernel then shows the program is tested in ``test_bwrap_provider.py``.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy.model import ARG, PathRule, Policy, RuleLine
from pysandboxes.providers import _ns_common
from pysandboxes.providers._ns_mounts import IgnoreMatcher, build_plan, find_hidden
from pysandboxes.providers.base import Launch
from pysandboxes.providers.bwrap import mount_options
from pysandboxes.runtime import RunContext


def launch_for(policy: Policy, cwd: Path, tmpdir: Path | None = None) -> Launch:
    ctx = RunContext(
        provider="bwrap",
        cwd=str(cwd),
        tmpdir=str(tmpdir) if tmpdir else None,
        python=sys.executable,
        prefixes=(sys.prefix, sys.base_prefix),
    )
    return Launch(policy, ctx, (sys.executable, "-c", "pass"), {}, cwd=str(cwd))


def rule(key: str, path: str) -> PathRule:
    return PathRule(key, path, ARG)


def test_ignore_matcher_names_and_paths(tmp_path: Path) -> None:
    matcher = IgnoreMatcher(
        [rule("ignore", ".env"), rule("ignore", "*.pem"), rule("ignore", "conf/*.key")],
        str(tmp_path),
    )
    assert matcher.hides("/a/b/.env")
    assert matcher.hides("/x/cert.pem")
    assert matcher.hides(str(tmp_path / "conf" / "a.key"))
    assert not matcher.hides(str(tmp_path / "conf" / "deeper" / "a.key"))  # * stops at /
    assert not matcher.hides("/a/b/env")
    assert not IgnoreMatcher([], "/")


def test_find_hidden_skips_hidden_subtrees_and_links(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "a.pem").write_text("x")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "b.pem").write_text("x")
    (tmp_path / "link").symlink_to("/etc")
    matcher = IgnoreMatcher([rule("ignore", "secrets"), rule("ignore", "*.pem")], "/")
    found = find_hidden(str(tmp_path), matcher)
    assert sorted(found) == [str(tmp_path / "keep" / "b.pem"), str(tmp_path / "secrets")]


def test_plan_orders_exposures_and_protects_rule_files(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "rw").mkdir()
    rules = tmp_path / "ro" / "rw" / ".py-sandboxes"
    rules.write_text("x")
    policy = Policy(
        expose_ro=(rule("expose-ro", str(tmp_path / "ro")),),
        expose_rw=(rule("expose-rw", str(tmp_path / "ro" / "rw")),),
        rule_files=(str(rules),),
    )
    plan = build_plan(launch_for(policy, tmp_path), hostname="h")
    binds = [(m.kind, m.dest) for m in plan.mounts if m.kind in ("ro-bind", "bind")]
    ro_at = binds.index(("ro-bind", str(tmp_path / "ro")))
    rw_at = binds.index(("bind", str(tmp_path / "ro" / "rw")))
    rules_at = binds.index(("ro-bind", str(rules)))
    assert ro_at < rw_at < rules_at  # deeper exposure later, the rule file last
    kinds = [(m.kind, m.dest) for m in plan.mounts]
    assert ("tmpfs", str(tmp_path)) in kinds and ("remount-ro", str(tmp_path)) in kinds  # cwd


def test_plan_rebuilds_directories_holding_ignored_entries(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    (proj / "sub").mkdir(parents=True)
    (proj / ".env").write_text("secret")
    (proj / "sub" / "k.pem").write_text("k")
    (proj / "sub" / "ok.txt").write_text("ok")
    (proj / "main.py").write_text("")
    policy = Policy(
        expose_ro=(rule("expose-ro", str(proj)),),
        ignore=(rule("ignore", ".env"), rule("ignore", "*.pem")),
    )
    plan = build_plan(launch_for(policy, proj), hostname="h")
    dests = [(m.kind, m.dest) for m in plan.mounts]
    assert ("tmpfs", str(proj)) in dests and ("tmpfs", str(proj / "sub")) in dests
    assert ("ro-bind", str(proj / "main.py")) in dests
    assert ("ro-bind", str(proj / "sub" / "ok.txt")) in dests
    assert all(str(proj / ".env") != d for _, d in dests)
    assert all(str(proj / "sub" / "k.pem") != d for _, d in dests)
    assert ("remount-ro", str(proj)) in dests
    assert sorted(plan.hidden) == [str(proj / ".env"), str(proj / "sub" / "k.pem")]


def test_ignore_path_pattern_leaves_a_default_etc_entry_out(tmp_path: Path) -> None:
    """Issue 24, item 7: ignore= of an /etc default bound one by one makes it absent; a name
    pattern is not applied there (the certificate bundle stays for OpenSSL)."""

    import os

    from pysandboxes.providers._ns_mounts import SYSTEM_ETC

    present = [n for n in SYSTEM_ETC if os.path.exists("/etc/" + n) and "." in n]
    from tests.helpers import require

    require(bool(present), "no /etc default with a suffix on this host")
    name = present[0]
    policy = Policy(ignore=(rule("ignore", "/etc/" + name),))
    plan = build_plan(launch_for(policy, tmp_path), hostname="h")
    assert all(m.dest != "/etc/" + name for m in plan.mounts)
    assert "/etc/" + name in plan.hidden
    by_name = Policy(ignore=(rule("ignore", "*" + name[name.rindex(".") :]),))
    plan = build_plan(launch_for(by_name, tmp_path), hostname="h")
    assert any(m.dest == "/etc/" + name for m in plan.mounts)


def test_rw_rebuild_warns(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("s")
    policy = Policy(expose_rw=(rule("expose-rw", str(tmp_path)),), ignore=(rule("ignore", ".env"),))
    plan = build_plan(launch_for(policy, tmp_path), hostname="h")
    assert any("kept in memory only" in w for w in plan.warnings)


def test_bad_input_is_a_config_error(tmp_path: Path) -> None:
    root_rw = Policy(expose_rw=(rule("expose-rw", "/"),))
    with pytest.raises(ConfigError, match="read-write"):
        build_plan(launch_for(root_rw, tmp_path), hostname="h")
    relative = Policy(expose_ro=(rule("expose-ro", "rel"),))
    with pytest.raises(ConfigError, match="absolute"):
        build_plan(launch_for(relative, tmp_path), hostname="h")
    bad = Policy(provider_params=(RuleLine("bwrap.hostname", "-bad-", ARG),))
    with pytest.raises(ConfigError, match="host name"):
        _ns_common.hostname(bad, "bwrap")
    assert _ns_common.hostname(Policy(), "bwrap") == "python-sb"


def test_missing_exposure_is_skipped_with_a_warning(tmp_path: Path) -> None:
    policy = Policy(expose_ro=(rule("expose-ro", str(tmp_path / "gone")),))
    plan = build_plan(launch_for(policy, tmp_path), hostname="h")
    assert any("does not exist" in w for w in plan.warnings)


def test_bwrap_options_and_generated_files(tmp_path: Path) -> None:
    policy = Policy(expose_ro=(rule("expose-ro", str(tmp_path)),))
    plan = build_plan(
        launch_for(policy, tmp_path), hostname="h", pinned=[("db.example", "10.0.2.9")]
    )
    args, fds = mount_options(plan)
    try:
        assert ["--ro-bind", str(tmp_path), str(tmp_path)] == args[
            args.index(str(tmp_path)) - 1 : args.index(str(tmp_path)) + 2
        ]
        at = args.index("/etc/hosts")
        fd = int(args[at - 1])
        with open(f"/proc/self/fd/{fd}", "rb") as handle:
            assert b"10.0.2.9\tdb.example" in handle.read()
        assert "--proc" in args and "--dev" in args
    finally:
        for fd in fds:
            import os

            os.close(fd)


def test_namespace_probe_makes_a_real_attempt() -> None:
    from pysandboxes.providers import _ns_probe

    # The attempt in a forked child, as used when settings alone cannot tell (a seccomp filter).
    assert _ns_probe._try_unshare(_ns_probe.SANDBOX_FLAGS) == (0, "")
    assert _ns_probe.namespace_problem() == ("", "")
    # An invalid request fails with the kernel's errno (a CSIGNAL bit: EINVAL).
    assert _ns_probe._try_unshare(_ns_probe.CLONE_NEWUSER | 0x1) == (errno.EINVAL, "unshare")


def test_missing_include_in_writable_exposure_is_warned(tmp_path: Path) -> None:
    from pysandboxes.policy import parse_text

    text = f'expose-rw={tmp_path}\ninclude "./.local.py-sandboxes"\n'
    policy = parse_text(text, str(tmp_path / ".py-sandboxes"), cwd=str(tmp_path), environ={})
    plan = build_plan(launch_for(policy, tmp_path), hostname="python-sb")
    assert any(
        f"{tmp_path}/.local.py-sandboxes does not exist" in warning for warning in plan.warnings
    ), plan.warnings
    assert not (tmp_path / ".local.py-sandboxes").exists()  # nothing created on the host


# -- issue 11, points 2, 4, 6, 7 ------------------------------------------------------------


def test_default_etc_grants_come_from_the_one_list(tmp_path: Path) -> None:
    from pysandboxes.policy import defaults
    from pysandboxes.providers import _ns_init, _ns_mounts

    plan = build_plan(launch_for(Policy(), tmp_path), hostname="h")
    bound = {m.dest for m in plan.mounts if m.kind == "ro-bind"}
    for name in defaults.namespace_etc():
        if Path("/etc", name).exists():
            assert "/etc/" + name in bound
    # Certificates, never the private keys (point 2); mime.types for mimetypes (point 4).
    assert "/etc/ssl" not in bound and "/etc/ssl/private" not in bound
    assert "/etc/ssl/certs" in bound or not Path("/etc/ssl/certs").exists()
    assert "/etc/mime.types" in bound or not Path("/etc/mime.types").exists()
    assert set(_ns_init.DEV_NODES) == set(_ns_mounts.DEV_NODES)


def test_exposed_accounts_replace_the_generated_files(tmp_path: Path) -> None:
    policy = Policy(expose_ro=(rule("expose-ro", "/etc/passwd"), rule("expose-ro", "/etc/group")))
    plan = build_plan(launch_for(policy, tmp_path), hostname="h")
    files = {m.dest for m in plan.mounts if m.kind == "file"}
    assert "/etc/passwd" not in files and "/etc/group" not in files
    binds = [m for m in plan.mounts if m.dest == "/etc/passwd"]
    assert [m.kind for m in binds] == ["ro-bind"]


def test_exposed_hosts_adds_the_hosts_entries_after_the_pinned_ones(tmp_path: Path) -> None:
    policy = Policy(expose_ro=(rule("expose-ro", "/etc/hosts"),))
    plan = build_plan(
        launch_for(policy, tmp_path), hostname="h", pinned=[("localhost", "10.9.9.9")]
    )
    at_hosts = [m for m in plan.mounts if m.dest == "/etc/hosts"]
    assert [m.kind for m in at_hosts] == ["file"]
    text = at_hosts[0].data.decode()
    assert text.index("10.9.9.9\tlocalhost") < len(text)
    host_lines = [
        line
        for line in Path("/etc/hosts").read_text().splitlines()
        if line.split("#", 1)[0].split()[1:]
    ]
    for line in host_lines:
        names = line.split("#", 1)[0].split()[1:]
        # A pinned name keeps the pinned address only; the others are added.
        assert (line in text) == ("localhost" not in names and "h" not in names)


def test_exposure_through_a_symbolic_link_is_recreated(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "project").symlink_to(real)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    given = PathRule("expose-ro", str(real), ARG, str(tmp_path / "home" / "project"))
    plan = build_plan(launch_for(Policy(expose_ro=(given,)), cwd), hostname="h")
    links = [(m.dest, m.source) for m in plan.mounts if m.kind == "symlink"]
    assert (str(tmp_path / "home" / "project"), str(real)) in links
    assert any(m.kind == "ro-bind" and m.dest == str(real) for m in plan.mounts)


def test_links_along_follows_chains() -> None:
    import os

    from pysandboxes.providers._ns_mounts import links_along

    if os.path.islink("/var/run"):
        assert links_along("/var/run/x") == [("/var/run", os.readlink("/var/run"))]
    assert links_along("/usr") == []


def test_exposed_etc_keeps_the_generated_files_over_it(tmp_path: Path) -> None:
    policy = Policy(expose_ro=(rule("expose-ro", "/etc"),))
    plan = build_plan(launch_for(policy, tmp_path), hostname="h", resolver="10.0.2.3")
    kinds = [(m.kind, m.dest) for m in plan.mounts]
    etc_bind = kinds.index(("ro-bind", "/etc"))
    for name in ("hosts", "resolv.conf", "nsswitch.conf"):
        if Path("/etc", name).is_file() and not Path("/etc", name).is_symlink():
            assert kinds.index(("file", f"/etc/{name}")) > etc_bind
    # The host's accounts are shown (the rule exposes them), not generated ones.
    assert ("file", "/etc/passwd") not in kinds and ("file", "/etc/group") not in kinds


def test_defaults_inside_a_writable_exposure_stay_read_only(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    venv.mkdir()
    policy = Policy(expose_rw=(rule("expose-rw", str(tmp_path)),))
    ctx = RunContext(
        provider="bwrap", cwd=str(tmp_path), python=sys.executable, prefixes=(str(venv),)
    )
    launch = Launch(policy, ctx, (sys.executable, "-c", "pass"), {}, cwd=str(tmp_path))
    kinds = [(m.kind, m.dest) for m in build_plan(launch, hostname="h").mounts]
    last_venv = max(i for i, kind in enumerate(kinds) if kind == ("ro-bind", str(venv)))
    assert last_venv > kinds.index(("bind", str(tmp_path)))
