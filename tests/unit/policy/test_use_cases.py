"""The rule files quoted in the seed's use cases parse to the policy they describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy import check_lock, load_policy
from pysandboxes.policy.decide import api_decision, import_allowed, net_decision, path_access
from pysandboxes.policy.locate import find_rule_file

SKILL_RULES = """\
# my-skill/scripts/.py-sandboxes
py-sandbox=true
os-sandbox=bwrap
learn=false
expose-ro=~/.claude/skills/my-skill/scripts
python-import=codecs, csv, encodings, json
# ... the rest of what learning mode wrote
"""

USER_PROFILE = """\
# ~/.config/py-sandboxes/user-py-sandboxes.profile, or /etc/py-sandboxes/global-py-sandboxes.profile
net=DENY|*|10.0.0.0/8|*|OUT
net=DENY|*|172.16.0.0/12|*|OUT
net=DENY|*|192.168.0.0/16|*|OUT
"""

MCP_RULES = """\
net=ALLOW|TCP|0.0.0.0/32|8000|IN  # The MCP endpoint
net=ALLOW|TCP|api.example.com|443|OUT
expose-ro=./data
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # how messages show ~/...
    monkeypatch.chdir("/")  # (a path below the cwd would be shown relative to it)
    return home


def _skill(home: Path) -> Path:
    scripts = home / ".claude" / "skills" / "my-skill" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "report.py").write_text("import csv\n")
    (scripts / ".py-sandboxes").write_text(SKILL_RULES)
    return scripts


def test_skill_manifest(tmp_path: Path, home: Path) -> None:
    scripts = _skill(home)
    work = tmp_path / "work"
    work.mkdir()
    (work / ".py-sandboxes").write_text("python-import=socket\nnet=ALLOW|*|*|*|OUT\n")
    (work / ".local.py-sandboxes").write_text("python-import=socket\n")
    located = find_rule_file(None, "script", str(scripts / "report.py"), str(work))
    assert located == str(scripts / ".py-sandboxes")
    policy = load_policy(located, environ={"HOME": str(home)}, cwd=str(work))
    assert policy.py_sandbox.value is True
    assert policy.os_sandbox.value == "bwrap"
    assert policy.locked and policy.lock is not None and policy.lock.line == 4
    assert [r.path for r in policy.expose_ro] == [str(scripts)]
    assert [r.name for r in policy.python_import] == ["codecs", "csv", "encodings", "json"]
    assert not import_allowed(policy, "socket")  # the cwd's files change nothing
    assert path_access(policy, str(scripts / "report.py")) == "ro"
    assert net_decision(policy, "TCP", None, "1.1.1.1", 443, "OUT") == (False, None)
    # the lock: no --learn, no command-line rule, no missing file
    with pytest.raises(ConfigError, match=r"learning mode refused: .*my-skill/scripts/"):
        check_lock(policy, learning_requested=True, rule_file_missing=False)
    with pytest.raises(ConfigError) as info:
        load_policy(
            located,
            cli_rules=[("os-sandbox", "none")],
            environ={"HOME": str(home)},
            cwd=str(work),
        )
    assert str(info.value) == (
        "<arg>: rule 'os-sandbox=none' refused: the configuration is locked by learn=false at "
        "~/.claude/skills/my-skill/scripts/.py-sandboxes(4)"
    )


def test_user_profile_keeps_skills_off_the_intranet(tmp_path: Path, home: Path) -> None:
    profile_dir = home / ".config" / "py-sandboxes"
    profile_dir.mkdir(parents=True)
    (profile_dir / "user-py-sandboxes.profile").write_text(USER_PROFILE)
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / ".py-sandboxes").write_text(
        'include "~/.config/py-sandboxes/user-py-sandboxes.profile"\n'
        'include "/etc/py-sandboxes/global-py-sandboxes.profile"\n'
        "net=ALLOW|*|*|*|OUT\n"
    )
    policy = load_policy(str(skill / ".py-sandboxes"), environ={"HOME": str(home)}, cwd="/")
    allowed, rule = net_decision(policy, "TCP", None, "10.255.255.1", 80, "OUT")
    assert not allowed and rule is not None
    # the pieces of: Connection to [10.255.255.1]:80 DENIED by explicit rule
    # 'net=DENY|*|10.0.0.0/8|*|OUT' from ~/.config/py-sandboxes/user-py-sandboxes.profile(1)
    assert rule.text == "net=DENY|*|10.0.0.0/8|*|OUT"
    assert str(rule.origin) == "~/.config/py-sandboxes/user-py-sandboxes.profile(2)"
    for ip in ("172.20.1.1", "192.168.1.1", "::ffff:192.168.0.1"):
        assert not net_decision(policy, "TCP", None, ip, 443, "OUT")[0]
    assert net_decision(policy, "TCP", "example.org", "93.184.216.34", 443, "OUT")[0]


def test_profile_line_numbers_as_in_the_message(tmp_path: Path, home: Path) -> None:
    # Without its comment header the first DENY is line 1, as the seed's message says.
    profile_dir = home / ".config" / "py-sandboxes"
    profile_dir.mkdir(parents=True)
    body = "".join(USER_PROFILE.splitlines(keepends=True)[1:])
    (profile_dir / "user-py-sandboxes.profile").write_text(body)
    main = tmp_path / "r"
    main.write_text('include "~/.config/py-sandboxes/user-py-sandboxes.profile"\n')
    policy = load_policy(str(main), environ={"HOME": str(home)}, cwd="/")
    rule = net_decision(policy, "TCP", None, "10.255.255.1", 80, "OUT")[1]
    assert rule is not None
    assert f"'{rule.text}' from {rule.origin}" == (
        "'net=DENY|*|10.0.0.0/8|*|OUT' from ~/.config/py-sandboxes/user-py-sandboxes.profile(1)"
    )


def test_api_function_beats_profile_category(tmp_path: Path, home: Path) -> None:
    (home / "p").write_text("python-api=DENY:process-exec\n")
    (tmp_path / "r").write_text('include "~/p"\npython-api=ALLOW:os.system\n')
    policy = load_policy(str(tmp_path / "r"), environ={"HOME": str(home)}, cwd="/")
    assert api_decision(policy, "os.system", "process-exec")[0]
    assert not api_decision(policy, "subprocess.Popen", "process-exec")[0]


def test_mcp_server_rules(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / ".py-sandboxes").write_text(MCP_RULES)
    policy = load_policy(str(tmp_path / ".py-sandboxes"), environ={}, cwd=str(tmp_path))
    assert net_decision(policy, "TCP", None, "0.0.0.0", 8000, "IN")[0]
    assert not net_decision(policy, "TCP", None, "0.0.0.0", 8001, "IN")[0]
    assert net_decision(policy, "TCP", "api.example.com", "203.0.113.5", 443, "OUT")[0]
    assert not net_decision(policy, "TCP", "localhost", "127.0.0.1", 443, "OUT")[0]
    assert not net_decision(policy, "TCP", None, "10.0.0.1", 443, "OUT")[0]
    assert path_access(policy, str(tmp_path / "data" / "doc.txt")) == "ro"
    assert path_access(policy, str(tmp_path / ".ssh" / "id_rsa")) is None


def test_local_include_lets_the_cwd_widen_the_rules(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    repo = tmp_path / "repo"
    skill.mkdir()
    repo.mkdir()
    (skill / ".py-sandboxes").write_text('python-import=json\ninclude "./.local.py-sandboxes"\n')
    (repo / ".local.py-sandboxes").write_text("python-import=socket\nnet=ALLOW|*|*|*|OUT\n")
    policy = load_policy(str(skill / ".py-sandboxes"), environ={}, cwd=str(repo))
    assert import_allowed(policy, "socket")  # why the template ships it commented out
    assert [i.status for i in policy.includes] == ["loaded"]
    policy = load_policy(str(skill / ".py-sandboxes"), environ={}, cwd=str(skill))
    assert not import_allowed(policy, "socket")


def test_os_sandbox_variable_downgrade(tmp_path: Path) -> None:
    (tmp_path / "r").write_text("os-sandbox=${OS_SANDBOX:-landlock}\n")
    assert load_policy(str(tmp_path / "r"), environ={}).os_sandbox.value == "landlock"
    downgraded = load_policy(str(tmp_path / "r"), environ={"OS_SANDBOX": "none"})
    assert downgraded.os_sandbox.value == "none"


def test_command_line_rules_take_precedence(tmp_path: Path) -> None:
    (tmp_path / "r").write_text("os-sandbox=bwrap\n")
    policy = load_policy(
        str(tmp_path / "r"),
        cli_rules=[("os-sandbox", "none"), ("expose-ro", "/etc"), ("learn", "")],
        environ={},
    )
    assert policy.os_sandbox.value == "none" and str(policy.os_sandbox.origin) == "<arg>"
    assert policy.expose_ro[0].path == "/etc"
    assert policy.learn.value == str(tmp_path / "r")
