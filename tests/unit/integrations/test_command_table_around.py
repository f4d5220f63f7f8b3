"""The ways around the hook: a second table of commands, in a world whose rule file is locked and
reads a variable (``os-sandbox=${OS_SANDBOX:-landlock}``, the template's own line).

Classes (issue 28): an environment assignment that changes a variable the rule file in effect
reads, in every spelling a shell accepts (the record is ``--explain``'s,
``policy.loader.variables_read``); privilege and identity wrappers and the other programs that
run their arguments as a command; patch and write commands that change a rule file or the
agent's hook registration; and, as controls, the same commands without the way around (``ok``).
Verdicts as in ``test_command_table.py``: ``ok`` or the kind of the first refusal.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pysandboxes.integrations.check import Checker, Settings

PATCH = (
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: scripts/.py-sandboxes\n@@\n"
    "-learn=false\n+learn=\n*** End Patch\nEOF"
)

# fmt: off
TABLE: list[tuple[str, str]] = [
    # -- controls ---------------------------------------------------------------------------------
    ("python-sb scripts/report.py", "ok"),
    ("./scripts/report.py data.csv", "ok"),
    ("cd scripts && ./report.py", "ok"),
    ("FOO=1 python-sb scripts/report.py", "ok"),
    ("export FOO=1; python-sb scripts/report.py", "ok"),
    ("env LANG=C python-sb scripts/report.py", "ok"),
    ("sudo -E python-sb scripts/report.py", "ok"),
    ("timeout 60 python-sb scripts/report.py", "ok"),
    ("nice -n 5 ./scripts/report.py", "ok"),
    ("OS_SANDBOX=none make test", "ok"),
    ("echo OS_SANDBOX=none", "ok"),
    ("python-sb --explain scripts/report.py", "ok"),
    ("git apply --check fix.diff", "ok"),
    ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n"
     "*** End Patch\nEOF", "ok"),
    ("patch -p1 < ok.diff", "ok"),
    ("git apply ok.diff", "ok"),
    ("cat .claude/settings.json", "ok"),
    ("cp scripts/.py-sandboxes /tmp/backup", "ok"),
    ("cp scripts/.py-sandboxes ~/no-such-backups-dir/", "ok"),
    ("rm -rf .claude", "rules-write"),
    ("sudo apt-get install -y bubblewrap", "ok"),
    ("chrt -p 1234", "ok"),
    # -- an assignment of a variable the rule file reads ------------------------------------------
    ("OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("OS_SANDBOX=none ./scripts/report.py", "sb-variable"),
    ("OS_SANDBOX=subprocess python-sb scripts/report.py data.csv", "sb-variable"),
    ("OS_SANDBOX= python-sb scripts/report.py", "sb-variable"),
    ("OS_SANDBOX+=x python-sb scripts/report.py", "sb-variable"),
    ("OS_SANDBOX='none' FOO=1 python-sb scripts/report.py", "sb-variable"),
    ("export OS_SANDBOX=none; python-sb scripts/report.py", "sb-variable"),
    ("export OS_SANDBOX=none && cd scripts && ./report.py", "sb-variable"),
    ("export \"OS_SANDBOX=none\"; ./scripts/report.py", "sb-variable"),
    ("export -- OS_SANDBOX=none; python-sb scripts/report.py", "sb-variable"),
    ("OS_SANDBOX=none; export OS_SANDBOX; python-sb scripts/report.py", "sb-variable"),
    ("OS_SANDBOX=none\npython-sb scripts/report.py", "sb-variable"),
    ("declare -x OS_SANDBOX=none; python-sb scripts/report.py", "sb-variable"),
    ("declare -gx OS_SANDBOX=none; python-sb scripts/report.py", "sb-variable"),
    ("typeset -x OS_SANDBOX=none; ./scripts/report.py", "sb-variable"),
    ("readonly OS_SANDBOX=none; python-sb scripts/report.py", "sb-variable"),
    ("set -a; OS_SANDBOX=none; python-sb scripts/report.py", "sb-variable"),
    ("set -o allexport; OS_SANDBOX=none; ./scripts/report.py", "sb-variable"),
    ("f() { local -x OS_SANDBOX=none; python-sb scripts/report.py; }; f", "sb-variable"),
    ("unset OS_SANDBOX; python-sb scripts/report.py", "sb-variable"),
    ("export -n OS_SANDBOX; python-sb scripts/report.py", "sb-variable"),
    ("declare +x OS_SANDBOX; python-sb scripts/report.py", "sb-variable"),
    (": ${OS_SANDBOX:=none}; python-sb scripts/report.py", "sb-variable"),
    ("echo ${OS_SANDBOX=none}; python-sb scripts/report.py", "sb-variable"),
    ("let OS_SANDBOX=1; python-sb scripts/report.py", "sb-variable"),
    ("(( OS_SANDBOX = 1 )); python-sb scripts/report.py", "sb-variable"),
    ("for OS_SANDBOX in none; do python-sb scripts/report.py; done", "sb-variable"),
    ("printf -v OS_SANDBOX none; python-sb scripts/report.py", "sb-variable"),
    ("read OS_SANDBOX <<< none; python-sb scripts/report.py", "sb-variable"),
    ("declare -n r=OS_SANDBOX; r=none; python-sb scripts/report.py", "sb-variable"),
    ("eval OS_SANDBOX=none; python-sb scripts/report.py", "sb-variable"),
    ("eval 'OS_SANDBOX=none python-sb scripts/report.py'", "sb-variable"),
    ("OS_SANDBOX=none bash -c 'python-sb scripts/report.py'", "sb-variable"),
    ("OS_SANDBOX=none sh -c ./scripts/report.py", "sb-variable"),
    ("bash -c 'export OS_SANDBOX=none; python-sb scripts/report.py'", "sb-variable"),
    ("env OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("/usr/bin/env OS_SANDBOX=none ./scripts/report.py", "sb-variable"),
    ("env -u OS_SANDBOX python-sb scripts/report.py", "sb-variable"),
    ("env --unset=OS_SANDBOX python-sb scripts/report.py", "sb-variable"),
    ("env -i python-sb scripts/report.py", "sb-variable"),
    ("env - PATH=/usr/bin python-sb scripts/report.py", "sb-variable"),
    ("env --ignore-environment ./scripts/report.py", "sb-variable"),
    ("env OS_SANDBOX=none bash -c './scripts/report.py'", "sb-variable"),
    ("timeout 5 env OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("nohup env OS_SANDBOX=none python-sb scripts/report.py &", "sb-variable"),
    ("xargs -a list env OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("busybox env OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("exec env OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("exec -c python-sb scripts/report.py", "sb-variable"),
    ("sudo OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("sudo python-sb scripts/report.py", "sb-variable"),
    ("doas python-sb scripts/report.py", "sb-variable"),
    ("su -c 'python-sb scripts/report.py' me", "sb-variable"),
    ("direnv exec . python-sb scripts/report.py", "sb-variable"),
    ("uv run --env-file .env python-sb scripts/report.py", "sb-variable"),
    ("find scripts -name report.py -exec env OS_SANDBOX=none python-sb scripts/report.py \\;",
     "sb-variable"),
    ("env -S 'OS_SANDBOX=none python-sb scripts/report.py'", "sb-variable"),
    ("env --split-string='OS_SANDBOX=none ./scripts/report.py'", "sb-variable"),
    ("OS_SANDBOX=none exec python-sb scripts/report.py", "sb-variable"),
    ("OS_SANDBOX=none command python-sb scripts/report.py", "sb-variable"),
    ("command env OS_SANDBOX=none python-sb scripts/report.py", "sb-variable"),
    ("(export OS_SANDBOX=none; python-sb scripts/report.py)", "sb-variable"),
    ("{ OS_SANDBOX=none; }; python-sb scripts/report.py", "sb-variable"),
    ("A=OS_SANDBOX; export $A=none; python-sb scripts/report.py", "sb-variable"),
    ("export \"$NAME\"=none; python-sb scripts/report.py", "sb-variable"),
    ("printf -v \"$NAME\" none; python-sb scripts/report.py", "sb-variable"),
    ("OS_SANDBOX=none python3 -m pysandboxes scripts/report.py", "sb-variable"),
    ("OS_SANDBOX=none uvx python-sb scripts/report.py", "sb-variable"),
    ("bwrap --clearenv --ro-bind / / python-sb scripts/report.py", "unreadable"),
    ("xargs python-sb < scripts.txt", "dynamic"),
    ("find . -name '*.py' -exec python-sb {} \\;", "dynamic"),
    ("ls *.py | parallel python-sb", "dynamic"),
    ("xargs -n1 python-sb scripts/report.py < files.txt", "ok"),
    ("find . -name '*.log' | xargs rm", "ok"),
    ("chroot / python-sb scripts/report.py", "unreadable"),
    ("nsenter -t 1 -m python-sb scripts/report.py", "unreadable"),
    # -- wrappers that run their arguments as a command -------------------------------------------
    ("sudo python3 x.py", "python"),
    ("sudo -u nobody python3 x.py", "python"),
    ("sudo --user nobody python3 x.py", "python"),
    ("sudo --user=nobody -- python3 x.py", "python"),
    ("sudo -Eu nobody python3 x.py", "python"),
    ("sudo -i python3 x.py", "python"),
    ("sudo -D /tmp python3 x.py", "python"),
    ("doas -u nobody python3 x.py", "python"),
    ("doas -n python3 x.py", "python"),
    ("pkexec --user nobody python3 x.py", "python"),
    ("su -c 'python3 x.py' nobody", "python"),
    ("su nobody -c 'python3 x.py'", "python"),
    ("su - nobody -c \"python3 x.py\"", "python"),
    ("su --command='python3 x.py' nobody", "python"),
    ("su -lc 'python3 x.py' nobody", "python"),
    ("su -s /usr/bin/python3 nobody", "python"),
    ("runuser -u nobody -- python3 x.py", "python"),
    ("runuser -u nobody python3 x.py", "python"),
    ("runuser -l nobody -c 'python3 x.py'", "python"),
    ("setpriv --reuid=1000 --regid=1000 --init-groups python3 x.py", "python"),
    ("setpriv --reuid 1000 --regid 1000 --clear-groups python3 x.py", "python"),
    ("setpriv --no-new-privs python3 x.py", "python"),
    ("unshare -r python3 x.py", "python"),
    ("unshare --user --map-root-user --net python3 x.py", "python"),
    ("unshare -Ur -- python3 x.py", "python"),
    ("unshare --propagation private -m python3 x.py", "python"),
    ("nsenter -t 1 -m -u -i -n -p python3 x.py", "python"),
    ("nsenter --target 1 --mount python3 x.py", "python"),
    ("chroot / python3 x.py", "python"),
    ("chroot --userspec=nobody:nogroup / python3 /tmp/x.py", "python"),
    ("env -i python3 x.py", "python"),
    ("nice -5 python3 x.py", "python"),
    ("nice --adjustment=5 python3 x.py", "python"),
    ("ionice -c 3 python3 x.py", "python"),
    ("ionice -c2 -n7 python3 x.py", "python"),
    ("timeout --signal=KILL 5 python3 x.py", "python"),
    ("timeout -k 2 5 python3 x.py", "python"),
    ("timeout --preserve-status 5 python3 x.py", "python"),
    ("stdbuf -o0 -e0 python3 x.py", "python"),
    ("stdbuf --output=L python3 x.py", "python"),
    ("setsid -f python3 x.py", "python"),
    ("taskset -c 0 python3 x.py", "python"),
    ("chrt -f 10 python3 x.py", "python"),
    ("chrt --idle 0 python3 x.py", "python"),
    ("flock /tmp/l python3 x.py", "python"),
    ("flock -x /tmp/l -c 'python3 x.py'", "python"),
    ("flock -w 5 /tmp/l python3 x.py", "python"),
    ("xargs -0 python3 < list", "python"),
    ("echo x.py | xargs -I{} python3 {}", "python"),
    ("echo x.py | xargs --max-args=1 python3", "python"),
    ("parallel python3 ::: a.py b.py", "python"),
    ("parallel -j2 python3 {} ::: a.py", "python"),
    ("parallel ::: 'python3 x.py'", "python"),
    ("echo 'python3 x.py' | parallel", "unparsable"),
    ("busybox python3 x.py", "python"),
    ("busybox sh -c 'python3 x.py'", "python"),
    ("busybox timeout 5 python3 x.py", "python"),
    ("time -p python3 x.py", "python"),
    ("/usr/bin/time -v python3 x.py", "python"),
    ("command -p python3 x.py", "python"),
    ("exec -a foo python3 x.py", "python"),
    ("builtin exec python3 x.py", "python"),
    ("systemd-run --user --pty python3 x.py", "python"),
    ("systemd-run -p MemoryMax=1G --wait python3 x.py", "python"),
    ("gosu nobody python3 x.py", "python"),
    ("su-exec nobody python3 x.py", "python"),
    ("sg users -c 'python3 x.py'", "python"),
    ("capsh -- -c 'python3 x.py'", "python"),
    ("prlimit --nofile=64 python3 x.py", "python"),
    ("setarch x86_64 -R python3 x.py", "python"),
    ("fakeroot -- python3 x.py", "python"),
    ("numactl --cpunodebind=0 python3 x.py", "python"),
    ("tmux new -d 'python3 x.py'", "python"),
    ("tmux send-keys -t s 'python3 x.py' Enter", "python"),
    ("screen -dmS s python3 x.py", "python"),
    ("echo 'python3 x.py' | at now", "unparsable"),
    ("bwrap --ro-bind / / --dev /dev python3 x.py", "python"),
    ("pyenv exec python3 x.py", "python"),
    ("mise exec python@3.12 -- python3 x.py", "python"),
    ("asdf exec python x.py", "python"),
    ("nix develop -c python3 x.py", "python"),
    ("flatpak-spawn --host python3 x.py", "python"),
    ("devbox run python3 x.py", "python"),
    ("daemonize /usr/bin/python3 x.py", "python"),
    ("mpirun -np 2 python3 x.py", "python"),
    ("runcon -t unconfined_t python3 x.py", "python"),
    ("sudo -u nobody env PYTHONPATH=. python-sb scripts/report.py", "sb-environment"),
    # -- patches and writes of a rule file or of the hook's registration --------------------------
    (PATCH, "rules-write"),
    ("apply_patch '*** Begin Patch\n*** Add File: .py-sandboxes\n+learn=\n*** End Patch'",
     "rules-write"),
    ("apply_patch < bad.patch", "rules-write"),
    ("applypatch <<'EOF'\n*** Begin Patch\n*** Delete File: scripts/.py-sandboxes\n"
     "*** End Patch\nEOF", "rules-write"),
    ("patch -p1 < bad.diff", "rules-write"),
    ("patch -p1 -i bad.diff", "rules-write"),
    ("patch scripts/.py-sandboxes bad.diff", "rules-write"),
    ("patch -p0 <<'EOF'\n--- scripts/.py-sandboxes\n+++ scripts/.py-sandboxes\n@@ -1 +1 @@\n"
     "-learn=false\n+learn=\nEOF", "rules-write"),
    ("git apply bad.diff", "rules-write"),
    ("git am bad.diff", "rules-write"),
    ("curl -s https://x/p.diff | git apply", "unreadable"),
    ("patch -p1 < missing.diff", "unreadable"),
    ("sed -Ei 's/learn=false//' scripts/.py-sandboxes", "rules-write"),
    ("perl -pi -e 's/false//' scripts/.py-sandboxes", "rules-write"),
    ("perl -i.bak -pe 's/false//' scripts/.py-sandboxes", "rules-write"),
    ("ruby -i -pe 'sub(/false/, \"\")' scripts/.py-sandboxes", "rules-write"),
    ("gawk -i inplace '{print}' scripts/.py-sandboxes", "rules-write"),
    ("vim -c ':%d|wq' scripts/.py-sandboxes", "rules-write"),
    ("ed scripts/.py-sandboxes <<< $'1d\\nw'", "rules-write"),
    ("sudo -e scripts/.py-sandboxes", "rules-write"),
    ("sudoedit scripts/.py-sandboxes", "rules-write"),
    ("echo learn= | sponge scripts/.py-sandboxes", "rules-write"),
    ("curl -o scripts/.py-sandboxes https://example.com/open", "rules-write"),
    ("wget -O scripts/.py-sandboxes https://example.com/open", "rules-write"),
    ("cp /tmp/open.py-sandboxes scripts/", "rules-write"),
    ("cp -t scripts /tmp/.py-sandboxes", "rules-write"),
    ("ln scripts/.py-sandboxes notes.txt", "rules-write"),
    ("echo learn= >> rules-link", "rules-write"),
    ("mv scripts scripts.old", "rules-write"),
    ("python-sb --uninstall-hook=claude-code", "hook-config"),
    ("claude --bare -p 'run python3 x.py'", "hook-config"),
    ("codex exec --dangerously-bypass-hook-trust 'run x.py'", "hook-config"),
    ("claude -p 'summarize the diff'", "ok"),
    ("rsync -a --delete empty/ scripts/", "rules-write"),
    ("rsync -a src/ backup/", "ok"),
    ("python-sb --install-hook=claude-code --unparsable=allow", "hook-config"),
    ("echo '{}' > .claude/settings.json", "rules-write"),
    ("rm .codex/hooks.json", "rules-write"),
    ("sed -i 's/hook/x/' .gemini/settings.json", "rules-write"),
    ("rm -f .github/hooks/python-sb.json", "rules-write"),
    ("echo '{}' > .cursor/hooks.json", "rules-write"),
]
# fmt: on


@pytest.fixture(scope="module")
def chosen_provider() -> Iterator[None]:
    """The user chose a provider for the agent's shell (``OS_SANDBOX=bwrap`` in its
    environment): clearing or unsetting it (``env -i``, ``sudo``, ``unset``) changes the rules."""

    before = os.environ.get("OS_SANDBOX")
    os.environ["OS_SANDBOX"] = "bwrap"
    yield
    if before is None:
        del os.environ["OS_SANDBOX"]
    else:
        os.environ["OS_SANDBOX"] = before


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory, chosen_provider: None) -> Checker:
    root = tmp_path_factory.mktemp("around")
    (root / "scripts").mkdir()
    (root / "scripts" / ".py-sandboxes").write_text(
        "learn=false\nos-sandbox=${OS_SANDBOX:-landlock}\n"
    )
    report = root / "scripts" / "report.py"
    report.write_text("#!/usr/bin/env -S python-sb\nprint('report')\n")
    report.chmod(0o755)
    diff = "--- a/scripts/.py-sandboxes\n+++ b/scripts/.py-sandboxes\n@@ -1 +1 @@\n-a\n+b\n"
    (root / "bad.diff").write_text(diff)
    (root / "ok.diff").write_text("--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    (root / "bad.patch").write_text("*** Begin Patch\n*** Update File: .py-sandboxes\n")
    (root / "rules-link").symlink_to(root / "scripts" / ".py-sandboxes")
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    return Checker(Settings(), str(root))


def test_the_table_covers_every_class() -> None:
    kinds = {verdict for _, verdict in TABLE}
    assert {"ok", "sb-variable", "python", "rules-write", "hook-config"} <= kinds
    assert len(TABLE) >= 180
    assert len({command for command, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize(("command", "expected"), TABLE, ids=[c[:60] for c, _ in TABLE])
def test_verdict(checker: Checker, command: str, expected: str) -> None:
    findings = checker.check(command)
    kinds = [f.kind for f in findings]
    if expected == "ok":
        assert findings == [], f"refused: {[f.message for f in findings]}"
    else:
        assert kinds and kinds[0] == expected, f"{command!r}: {kinds} {findings}"
        assert all(f.message for f in findings)


def test_the_refusal_names_the_variable_and_its_rule(checker: Checker) -> None:
    [finding] = checker.check("OS_SANDBOX=none python-sb scripts/report.py")
    assert "OS_SANDBOX" in finding.message
    assert "scripts/.py-sandboxes(2)" in finding.message
    assert finding.instead.startswith("python-sb scripts/report.py (without setting OS_SANDBOX")


def test_a_variable_the_rule_file_does_not_read_passes(tmp_path: Path) -> None:
    (tmp_path / ".py-sandboxes").write_text("learn=false\nos-sandbox=landlock\n")
    (tmp_path / "x.py").write_text("print(1)\n")
    checker = Checker(Settings(), str(tmp_path))
    assert checker.check("OS_SANDBOX=none python-sb x.py") == []
    assert checker.check("env -i python-sb x.py") == []


def test_clearing_a_variable_that_is_not_set_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``OS_SANDBOX`` unset where the agent's shell starts, ``sudo`` or ``env -i`` leave
    the rule's default as it is: only an assignment is refused."""

    monkeypatch.delenv("OS_SANDBOX", raising=False)
    (tmp_path / ".py-sandboxes").write_text("learn=false\nos-sandbox=${OS_SANDBOX:-landlock}\n")
    (tmp_path / "x.py").write_text("print(1)\n")
    checker = Checker(Settings(), str(tmp_path))
    for command in (
        "sudo python-sb x.py",
        "env -i python-sb x.py",
        "unset OS_SANDBOX; python-sb x.py",
        "env -u OS_SANDBOX python-sb x.py",
    ):
        assert checker.check(command) == [], command
    assert [f.kind for f in checker.check("OS_SANDBOX=landlock python-sb x.py")] == ["sb-variable"]
