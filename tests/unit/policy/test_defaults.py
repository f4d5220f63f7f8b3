"""The one list of default grants (issue 11, deliverable 1) and the docs generated from it."""

from __future__ import annotations

from pathlib import Path

from pysandboxes.guard import files as guard_files
from pysandboxes.policy import defaults
from pysandboxes.providers import _ns_mounts, landlock, limits

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_every_enforcer_reads_the_same_list() -> None:
    every_ro = set(defaults.python_layer_paths(defaults.RO))
    every_rw = set(defaults.python_layer_paths(defaults.RW))
    guard = {
        *guard_files.CERTIFICATE_STORES,
        *guard_files.SYSTEM_DATA,
        *guard_files.DEVICES_RO,
        *guard_files.OWN_PROC,
    }
    assert guard == every_ro and set(guard_files.DEVICES_RW) == every_rw
    landlock_paths = {*landlock.SYSTEM_READ, *(p for p, _r in landlock.SYSTEM_DEVICES)}
    # The own /proc entry aside: landlock grants /proc/PID once the PID is known (at apply time).
    assert (every_ro | every_rw) - set(guard_files.OWN_PROC) <= landlock_paths
    assert guard_files.OWN_PROC == ("/proc/self",)
    # What landlock grants beyond the Python layer is listed (and justified) in the module.
    extra = landlock_paths - every_ro - every_rw
    listed = {p for g in defaults.GRANTS if g.scope in ("kernel", "landlock") for p in g.paths}
    assert extra <= listed
    # The namespace providers bind every /etc entry of the list (generated files aside).
    for path in every_ro:
        if path.startswith("/etc/"):
            name = path[len("/etc/") :]
            assert name in _ns_mounts.SYSTEM_ETC or name in defaults.GENERATED_ETC


def test_private_keys_are_never_a_default() -> None:
    for grant in defaults.GRANTS:
        for path in grant.paths:
            assert path not in ("/etc/ssl", "/etc/pki", "/etc") and "private" not in path


def test_write_grants_are_devices_only() -> None:
    for grant in defaults.GRANTS:
        if grant.access == defaults.RW:
            assert all(path.startswith("/dev/") for path in grant.paths), grant


def test_rules_doc_holds_the_generated_table() -> None:
    assert defaults.markdown_table() in (DOCS / "rules.md").read_text()


def test_security_model_doc_holds_the_limits_table() -> None:
    assert limits.markdown_table() in (DOCS / "security-model.md").read_text()


def test_every_limit_has_a_known_status_and_fills_its_fields() -> None:
    for limit in limits.LIMITS:
        assert limit.status in (limits.ENFORCED, limits.LIMIT, limits.REFUSED)
        assert ("{where}" in limit.text) == (limit.where != ("", ""))
    text = limits.notice("files.ignore", False, rule="ignore=.env", origin="f(1)").text
    assert text.endswith("(NOT enforced)") and "ignore=.env" in text
    assert limits.said_at_start("files.ignore", False)
    assert not limits.said_at_start("files.ignore", True)
    assert limits.said_at_start("net.unix-sockets", True)


def test_check_script_wants_a_rule_or_a_default(tmp_path: Path) -> None:
    from pysandboxes.policy import parse_text

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    script = scripts / "job.py"
    script.write_text("pass\n")

    def check(*lines: str, roots: tuple[str, ...] = ()) -> limits.Notice | None:
        text = "\n".join(lines) + "\n"
        policy = parse_text(text, str(tmp_path / ".py-sandboxes"), cwd=str(tmp_path), environ={})
        return limits.check_script(policy, str(script), roots)

    refused = check()
    assert refused is not None and refused.key == "files.script-unreadable"
    assert f"expose-ro={scripts}" in refused.text or "expose-ro=./scripts" in refused.text
    assert check(f"expose-ro={scripts}") is None
    assert check(f"expose-rw={tmp_path}") is None
    assert check(f"expose-ro={script}") is None
    assert check(roots=(str(tmp_path),)) is None  # inside the interpreter's installation
    hidden = check(f"expose-ro={scripts}", "ignore=job.py")
    assert hidden is not None and hidden.key == "files.script-unreadable"
