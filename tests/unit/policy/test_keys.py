"""SPEC §2.2: every key, valid values and each error message."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.policy.model import ARG, Policy
from tests.unit.policy.util import load, one_problem, problems


def test_defaults_of_an_empty_file(tmp_path: Path) -> None:
    policy = load(tmp_path, "")
    assert policy.py_sandbox.value is True and policy.py_sandbox.origin is None
    assert policy.os_sandbox.value == "subprocess"
    assert policy.learn.value is None
    assert policy.lock is None
    assert policy.rule_files == (str(tmp_path / ".py-sandboxes"),)
    assert policy.main_file == str(tmp_path / ".py-sandboxes")


def test_single_keys(tmp_path: Path) -> None:
    policy = load(tmp_path, "py-sandbox=false\nos-sandbox=bwrap\nlearn=out.rules\n")
    assert policy.py_sandbox.value is False
    assert policy.py_sandbox.origin is not None and policy.py_sandbox.origin.line == 1
    assert policy.os_sandbox.value == "bwrap"
    assert policy.learn.value == str(tmp_path / "out.rules")
    assert load(tmp_path, "py-sandbox=TRUE\n").py_sandbox.value is True


@pytest.mark.parametrize("value", ["", "true"])
def test_learn_without_a_file_means_the_rule_file(tmp_path: Path, value: str) -> None:
    assert load(tmp_path, f"learn={value}\n").learn.value == str(tmp_path / ".py-sandboxes")


def test_learn_paths_expand_home(tmp_path: Path) -> None:
    assert load(tmp_path, "learn=~/x\n").learn.value == str(tmp_path / "home" / "x")


@pytest.mark.parametrize("provider", ["none", "subprocess", "landlock", "bwrap", "unshare", "qemu"])
def test_every_provider_is_accepted(tmp_path: Path, provider: str) -> None:
    assert load(tmp_path, f"os-sandbox={provider}\n").os_sandbox.value == provider


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("py-sandbox=yes", "py-sandbox=yes: expected true or false"),
        ("os-sandbox=landlok", "os-sandbox=landlok: unknown provider (did you mean landlock?)"),
        ("os-sandbox=", "os-sandbox=: unknown provider; expected one of none, subprocess"),
        (
            "os-sandbox=bwrap\nos-sandbox=bwrap",
            "os-sandbox is single-valued and already set in "
            "the rule files at .py-sandboxes(1) (os-sandbox=bwrap)",
        ),
        ("denials=log.jsonl", "the denials file is a command-line option (--denials=FILE)"),
        ("python-imports=json", "unknown key 'python-imports' (did you mean python-import?)"),
        ("expose=/tmp", "unknown key 'expose'"),
        (
            "bwarp.hostname=x",
            "unknown provider 'bwarp' in key 'bwarp.hostname' (did you mean bwrap?)",
        ),
        ("foo.bar=x", "unknown provider 'foo' in key 'foo.bar' (providers: none, subprocess"),
    ],
)
def test_key_errors(tmp_path: Path, text: str, message: str) -> None:
    found = one_problem(tmp_path, text + "\n")
    assert message in found, found


def test_single_key_duplicated_across_files(tmp_path: Path) -> None:
    (tmp_path / "home" / "p").write_text("py-sandbox=true\n")
    found = one_problem(tmp_path, 'include "~/p"\npy-sandbox=false\n')
    assert found == (
        ".py-sandboxes(2): py-sandbox is single-valued and already set in the rule files at "
        "home/p(1) (py-sandbox=true)"
    )


# -- env / unenv ---------------------------------------------------------------------------------


def test_env_forms_keep_their_template(tmp_path: Path) -> None:
    text = (
        "env=LANG=C.UTF-8\nenv=TOKEN=${TOKEN}\nenv=MODE=${MODE:-prod}\nenv=PAT_*=${PAT_*}\n"
        "env=EMPTY=\nunenv=PAT_SECRET, AWS_*\n"
    )
    policy = load(tmp_path, text, env={"TOKEN": "host-value"})
    assert [(r.name, r.template, r.is_pattern) for r in policy.env] == [
        ("LANG", "C.UTF-8", False),
        ("TOKEN", "${TOKEN}", False),
        ("MODE", "${MODE:-prod}", False),
        ("PAT_*", "${PAT_*}", True),
        ("EMPTY", "", False),
    ]
    assert [r.name for r in policy.unenv] == ["PAT_SECRET", "AWS_*"]
    assert policy.env[1].text == "env=TOKEN=${TOKEN}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "env=TOKEN",
            "env=TOKEN has no value: write env=NAME=VALUE (for the host's value: env=NAME=${NAME})",
        ),
        ("env=1X=a", "bad variable name '1X' in env="),
        ("env=A-B=a", "bad variable name 'A-B' in env="),
        ("env=${X}=a", "bad variable name '${X}' in env="),
        (
            "env=A=${P_*}",
            "'${P_*}' is a pattern: it may only appear in the value of the same "
            "pattern (env=P_*=${P_*})",
        ),
        ("env=Q_*=${P_*}", "'${P_*}' is a pattern"),
        ("env=A=$B", "'$B...' is not a variable"),
        ("env=A=${}", "'${}' is not a valid variable name"),
        ("env=A=${1}", "'${1' is not a valid variable name"),
        (
            "env=A=1\nenv=A=2",
            "env=A=2 conflicts with env=A=1 at .py-sandboxes(1): one variable, two values",
        ),
        (
            "env=A_*=x\nenv=*_B=y",
            "env=*_B=y and env=A_*=x at .py-sandboxes(1) are equally "
            "specific patterns that give different values to the same names",
        ),
        ("unenv=A-B", "bad variable name or pattern 'A-B' in unenv="),
        ("unenv=A,,B", "unenv=A,,B: empty item in the comma-separated list"),
    ],
)
def test_env_errors(tmp_path: Path, text: str, message: str) -> None:
    found = one_problem(tmp_path, text + "\n")
    assert message in found, found


def test_env_patterns_that_cannot_overlap_or_agree_are_fine(tmp_path: Path) -> None:
    # same specificity, disjoint: no name matches both
    load(tmp_path, "env=AB_*=x\nenv=CD_*=y\n")
    # same specificity, overlapping, same meaning (each passes the host's value)
    load(tmp_path, "env=A_*=${A_*}\nenv=*_B=${*_B}\n")
    # different specificity: the more specific wins, no conflict
    load(tmp_path, "env=A_*=x\nenv=A_B*=y\n")
    # an exact repeat is harmless
    load(tmp_path, "env=A=1\nenv=A=1\n")


# -- paths ---------------------------------------------------------------------------------------


def test_expose_paths_are_resolved(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "home" / "docs").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "data")
    policy = load(tmp_path, "expose-ro=./data\nexpose-ro=~/docs\nexpose-rw=data/\nexpose-ro=link\n")
    assert [r.path for r in policy.expose_ro] == [
        str(tmp_path / "data"),
        str(tmp_path / "home" / "docs"),
        str(tmp_path / "data"),
    ]
    assert policy.expose_ro[2].written == "link"
    assert [r.path for r in policy.expose_rw] == [str(tmp_path / "data")]
    assert policy.expose_rw[0].text == "expose-rw=data/"


def test_expose_uses_variables(tmp_path: Path) -> None:
    policy = load(tmp_path, "expose-rw=${TMPDIR:-/tmp}\n", env={"TMPDIR": str(tmp_path)})
    assert policy.expose_rw[0].path == str(tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("expose-ro=./missing", "expose-ro=./missing: no such file or directory ("),
        ("expose-rw=", "expose-rw= needs a path"),
        ("expose-ro=${NOPE}", "expose-ro= needs a path"),
        ("ignore=", "ignore= needs a file name or a glob"),
        ("ignore=/", "ignore= needs a file name or a glob"),
        ("ignore=[z-a].txt", "ignore=[z-a].txt: bad glob (bad character range z-a)"),
        ("ignore=a\0b", "a path cannot contain a NUL character: 'a\\x00b'"),
        ("expose-ro=/tmp/\0", "a path cannot contain a NUL character"),
        ("expose-rw=~\0", "a path cannot contain a NUL character"),
        ("learn=~/\0", "learn=~/\\x00: a path cannot contain a NUL character"),
        ('include "\0"', "a path cannot contain a NUL character"),
    ],
)
def test_path_errors(tmp_path: Path, text: str, message: str) -> None:
    found = one_problem(tmp_path, text + "\n")
    assert message in found, found


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "expose-ro=~/${PYSB_NOPE}",
            "expose-ro= is ~/ because ${PYSB_NOPE} is not set (or empty) in python-sb's "
            "environment (write ${PYSB_NOPE:-} where an empty value is meant)",
        ),
        ("expose-rw=${PYSB_A}${PYSB_B}/x", "expose-rw= is /x because ${PYSB_A}, ${PYSB_B} are"),
    ],
)
def test_a_path_with_an_unset_variable_names_it(tmp_path: Path, text: str, message: str) -> None:
    """Issue 26 friction: ``expose-ro=~/${NOPE}`` exposed the whole home, silently, and
    ``expose-ro=${NOPE}/data`` said only that /data does not exist."""

    found = one_problem(tmp_path, text + "\n")
    assert found.startswith(".py-sandboxes(1): ") and message in found, found


def test_a_path_with_an_empty_variable_that_says_so_is_kept(tmp_path: Path) -> None:
    policy = load(tmp_path, "expose-ro=~/${PYSB_NOPE:-}\n", env={"HOME": str(tmp_path)})
    assert [r.path for r in policy.expose_ro] == [str(tmp_path)]
    learned = load(tmp_path, "# --- learned ---\nexpose-ro=~/${PYSB_NOPE}\n")
    assert learned.expose_ro == () and "skipped: expose-ro= is ~/ because" in learned.warnings[0]


def test_missing_exposed_path_in_learned_block_is_a_warning(tmp_path: Path) -> None:
    text = "# --- learned 2026-11-29 ---\nexpose-ro=./gone\n# --- end learned ---\nexpose-ro=/tmp\n"
    policy = load(tmp_path, text)
    assert policy.expose_ro[0].path == "/tmp" and not policy.expose_ro[0].origin.learned
    assert len(policy.warnings) == 1
    assert policy.warnings[0].startswith(".py-sandboxes(2): skipped: expose-ro=./gone: no such")
    # after the end marker the same line is an error again
    found = one_problem(tmp_path, text + "expose-ro=./gone\n")
    assert found.startswith(".py-sandboxes(5): expose-ro=./gone: no such file")
    # learned_ok makes it a warning everywhere
    assert load(tmp_path, "expose-ro=./gone\n", learned_ok=True).warnings
    # a learned ${VIRTUAL_ENV} that is unset on this run expands to nothing: skipped too
    policy = load(tmp_path, "# --- learned ---\nexpose-ro=${VIRTUAL_ENV}\n")
    assert policy.warnings == (".py-sandboxes(2): skipped: expose-ro= expands to no path",)


def test_learned_lines_are_marked(tmp_path: Path) -> None:
    text = "python-import=a\n# --- learned: imports ---\npython-import=b\n# --- end learned ---\n"
    policy = load(tmp_path, text)
    assert [(r.name, r.origin.learned) for r in policy.python_import] == [
        ("a", False),
        ("b", True),
    ]


def test_ignore_patterns(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "ln").symlink_to(tmp_path / "real")
    policy = load(tmp_path, "ignore=.env\nignore=*.pem\nignore=./secrets/\nignore=ln/*.key\n")
    assert [r.path for r in policy.ignore] == [
        ".env",
        "*.pem",
        str(tmp_path / "secrets"),
        str(tmp_path / "real") + "/*.key",
    ]
    assert policy.ignore[2].written == "./secrets/"


# -- python-import / python-api ------------------------------------------------------------------


def test_python_import_items(tmp_path: Path) -> None:
    policy = load(tmp_path, "python-import=codecs, csv,encodings , json\npython-import=*\n")
    assert [r.name for r in policy.python_import] == ["codecs", "csv", "encodings", "json", "*"]
    assert policy.imports_all()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "python-import=os.path",
            "bad module name 'os.path' in python-import (write the top-level name: os)",
        ),
        ("python-import=1abc", "bad module name '1abc' in python-import"),
        ("python-import=json,", "empty item in the comma-separated list"),
        ("python-import=", "empty item in the comma-separated list"),
    ],
)
def test_python_import_errors(tmp_path: Path, text: str, message: str) -> None:
    assert message in one_problem(tmp_path, text + "\n")


def test_python_api_targets(tmp_path: Path) -> None:
    policy = load(
        tmp_path,
        "python-api=ALLOW:os.system,process-exec\npython-api=deny:*\n"
        "python-api=DENY:native, subprocess.Popen\n",
    )
    assert [(r.action, r.target, r.is_category) for r in policy.python_api] == [
        ("ALLOW", "os.system", False),
        ("ALLOW", "process-exec", True),
        ("DENY", "*", False),
        ("DENY", "native", True),
        ("DENY", "subprocess.Popen", False),
    ]
    assert policy.python_api[0].text == "python-api=ALLOW:os.system"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("python-api=os.system", "expected ALLOW:target[,target] or DENY:target[,target]"),
        ("python-api=PERMIT:os.system", "expected ALLOW:target[,target]"),
        (
            "python-api=ALLOW:proces-exec",
            "unknown python-api target 'proces-exec' (did you mean process-exec?)",
        ),
        (
            "python-api=ALLOW:system",
            "unknown python-api target 'system': a target is *, a category (process-exec,",
        ),
        ("python-api=ALLOW:os.exec*", "unknown python-api target 'os.exec*'"),
        ("python-api=ALLOW:", "empty item"),
        (
            "python-api=ALLOW:dynamic-code\neval-call=len",
            "python-api=ALLOW:dynamic-code "
            "(unguarded eval/exec) cannot be combined with eval-* rules (eval-call=len at "
            ".py-sandboxes(2))",
        ),
    ],
)
def test_python_api_errors(tmp_path: Path, text: str, message: str) -> None:
    assert message in one_problem(tmp_path, text + "\n")


# -- net -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "host", "is_name", "ports"),
    [
        ("ALLOW|TCP|api.example.com|443|OUT", "api.example.com", True, ((443, 443),)),
        ("ALLOW|TCP|API.Example.COM.|443|OUT", "api.example.com", True, ((443, 443),)),
        ("DENY|*|10.0.0.0/8|*|OUT", "10.0.0.0/8", False, None),
        ("DENY|*|10.1.2.3/8|*|OUT", "10.0.0.0/8", False, None),
        ("ALLOW|TCP|0.0.0.0/32|8000|IN", "0.0.0.0", False, ((8000, 8000),)),
        ("ALLOW|UDP|2001:DB8::1|53|OUT", "2001:db8::1", False, ((53, 53),)),
        ("ALLOW|UDP|[2001:db8::1]|53|OUT", "2001:db8::1", False, ((53, 53),)),
        ("ALLOW|*|fd00::/8|1-1024|*", "fd00::/8", False, ((1, 1024),)),
        ("DENY|*|::ffff:10.0.0.1|*|OUT", "10.0.0.1", False, None),
        ("DENY|*|::ffff:10.0.0.0/104|*|OUT", "10.0.0.0/8", False, None),
        ("ALLOW|*|*|80,443,8000-8080,81|*", "*", False, ((80, 81), (443, 443), (8000, 8080))),
        ("ALLOW|*|*|0-65535|*", "*", False, ((0, 65535),)),
        ("allow|tcp|my_host.local|22|out", "my_host.local", True, ((22, 22),)),
    ],
)
def test_net_rules(tmp_path: Path, value: str, host: str, is_name: bool, ports: object) -> None:
    rule = load(tmp_path, f"net={value}\n").net[0]
    assert (rule.host, rule.is_name, rule.ports) == (host, is_name, ports)
    assert rule.text == f"net={value}"
    assert rule.action in ("ALLOW", "DENY") and rule.direction in ("OUT", "IN", "*")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ALLOW|TCP|x|443", "net= takes 5 fields ACTION|PROTO|HOST|PORTS|DIR, got 4"),
        ("ALLOW|TCP|x|443|OUT|x", "got 6"),
        ("PERMIT|TCP|x|443|OUT", "bad ACTION 'PERMIT' in net=: expected ALLOW or DENY"),
        ("ALLOW|ICMP|x|443|OUT", "bad PROTO 'ICMP' in net=: expected TCP, UDP or *"),
        ("ALLOW|TCP|x|443|BOTH", "bad DIR 'BOTH' in net=: expected OUT, IN or *"),
        ("ALLOW|TCP|10.0.0.0/33|443|OUT", "bad HOST '10.0.0.0/33': a CIDR is ADDRESS/PREFIX"),
        ("ALLOW|TCP|bad host|443|OUT", "bad HOST 'bad host': expected *, an IPv4 or IPv6"),
        ("ALLOW|TCP|999.1.1.1|443|OUT", "bad HOST '999.1.1.1'"),
        ("ALLOW|TCP|-x.org|443|OUT", "bad HOST '-x.org'"),
        ("ALLOW|TCP||443|OUT", "bad HOST ''"),
        ("ALLOW|TCP|x.org|65536|OUT", "bad PORTS '65536': ports are *, N, A-B or a comma list"),
        ("ALLOW|TCP|x.org|-1|OUT", "bad PORTS '-1'"),
        ("ALLOW|TCP|x.org|http|OUT", "bad PORTS 'http'"),
        ("ALLOW|TCP|x.org|80,|OUT", "bad PORTS '80,'"),
        ("ALLOW|TCP|x.org|90-80|OUT", "port range '90-80' goes backwards"),
        ("ALLOW|TCP|x.org||OUT", "bad PORTS ''"),
    ],
)
def test_net_errors(tmp_path: Path, value: str, message: str) -> None:
    found = one_problem(tmp_path, f"net={value}\n")
    assert message in found, found


# -- eval-* --------------------------------------------------------------------------------------


def test_eval_keys(tmp_path: Path) -> None:
    text = (
        "eval-syntax=arith, compare, BinOp\neval-syntax=DENY:loop\n"
        "eval-call=len,range,min\neval-attribute=str-methods,upper\neval-import=math,os.path\n"
        "eval-magic=__len__\neval-namespace=closed\neval-timeout=500ms\n"
        "eval-max-iterations=10000\neval-max-call-depth=50\neval-max-alloc=64M\n"
        "eval-max-nodes=2000\neval-call:calc=sqrt\neval-timeout:calc=1.5s\n"
    )
    policy = load(tmp_path, text)
    keys = [r.key for r in policy.eval_rules]
    assert keys == [
        "eval-syntax",
        "eval-syntax",
        "eval-call",
        "eval-attribute",
        "eval-import",
        "eval-magic",
        "eval-namespace",
        "eval-timeout",
        "eval-max-iterations",
        "eval-max-call-depth",
        "eval-max-alloc",
        "eval-max-nodes",
        "eval-call:calc",
        "eval-timeout:calc",
    ]
    assert policy.eval_rules[1].value == "DENY:loop"


@pytest.mark.parametrize(
    ("written", "normal"),
    [
        ("eval-max-iterations=500_000", "500000"),
        ("eval-max-iterations=1M", "1M"),
        ("eval-max-alloc=20MB", "20M"),
        ("eval-max-alloc=20 MiB", "20M"),
        ("eval-max-alloc=64kb", "64K"),
        ("eval-max-alloc=1G", "1G"),
        ("eval-max-output=4096B", "4096"),
        ("eval-timeout=2s", "2s"),
        ("eval-timeout=2 s", "2s"),
        ("eval-timeout=1_500ms", "1500ms"),
        ("eval-timeout=1.5s", "1.5s"),
        ("eval-timeout=.5s", "0.5s"),
    ],
)
def test_eval_budgets_as_people_write_them(tmp_path: Path, written: str, normal: str) -> None:
    """Issue 26, defect 9: ``500_000`` and ``20MB`` were refused. The loader keeps the normal
    form, the one ``evalguard/rules.py`` reads."""

    policy = load(tmp_path, written + "\n")
    assert [r.value for r in policy.eval_rules] == [normal]


def test_eval_single_key_command_line_override(tmp_path: Path) -> None:
    policy = load(tmp_path, "eval-timeout=2s\n", cli=[("eval-timeout", "5s")])
    assert [(r.value, r.origin.is_arg) for r in policy.eval_rules] == [("5s", True)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "eval-syntax=arithmetic",
            "unknown eval-syntax group or ast node 'arithmetic' (did you mean arith?)",
        ),
        ("eval-syntax=NotANode", "unknown eval-syntax group or ast node 'NotANode'"),
        ("eval-syntax=arith,,loop", "empty item in eval-syntax=arith,,loop"),
        ("eval-syntax=DENY:", "empty item"),
        ("eval-attribute=__class__", "bad eval-attribute '__class__': a non-dunder attribute"),
        ("eval-magic=len", "bad eval-magic 'len': a dunder name such as __len__"),
        ("eval-call=a b", "bad eval-call item 'a b': a name or a dotted name"),
        ("eval-import=os..path", "bad eval-import item 'os..path'"),
        ("eval-namespace=open", "bad eval-namespace 'open': expected closed, adaptive, caller"),
        ("eval-timeout=2", "bad eval-timeout '2': write a duration in s or ms, such as 2s"),
        ("eval-timeout=1__0s", "bad eval-timeout '1__0s'"),
        ("eval-max-alloc=20XB", "bad budget '20XB': a positive integer, '_' allowed between"),
        ("eval-max-iterations=_5", "bad budget '_5'"),
        ("eval-max-output=5_", "bad budget '5_'"),
        (
            "eval-attribute=float-methods",
            "unknown eval-attribute group 'float-methods': the methods of float are in num-methods",
        ),
        ("eval-timeout=fast", "bad eval-timeout 'fast'"),
        ("eval-timeout=0s", "bad eval-timeout '0s': between 1ms and 86400s"),
        ("eval-max-nodes=-1", "bad budget '-1': a positive integer"),
        ("eval-max-alloc=0", "bad budget '0'"),
        ("eval-call:1x=len", "bad profile name '1x' in eval-call:1x"),
        ("eval-timeout=1s\neval-timeout=2s", "eval-timeout is single-valued and already set"),
        ("eval-sandbox=x", "unknown key 'eval-sandbox'"),
    ],
)
def test_eval_errors(tmp_path: Path, text: str, message: str) -> None:
    found = one_problem(tmp_path, text + "\n")
    assert message in found, found


# -- provider parameters -------------------------------------------------------------------------


def test_provider_params_of_selected_provider(tmp_path: Path) -> None:
    (tmp_path / "vmlinuz").write_text("")
    text = (
        "os-sandbox=qemu\nqemu.memory=1g\nqemu.cpus=2\nqemu.kernel=./vmlinuz\nqemu.accel=kvm\n"
        "bwrap.hostname=sb\nbwrap.whatever=ignored\n"
    )
    policy = load(tmp_path, text)
    assert [(r.key, r.value) for r in policy.provider_params] == [
        ("qemu.memory", "1G"),
        ("qemu.cpus", "2"),
        ("qemu.kernel", str(tmp_path / "vmlinuz")),
        ("qemu.accel", "kvm"),
    ]
    line = policy.provider_param("qemu", "memory")
    assert line is not None and line.value == "1G"
    assert policy.provider_param("bwrap", "hostname") is None


def test_landlock_and_unshare_params(tmp_path: Path) -> None:
    policy = load(tmp_path, "os-sandbox=landlock\nlandlock.unix-sockets=Yes\n")
    assert [(r.key, r.value) for r in policy.provider_params] == [("landlock.unix-sockets", "true")]
    policy = load(tmp_path, "os-sandbox=unshare\nunshare.hostname=box-1\n")
    assert [(r.key, r.value) for r in policy.provider_params] == [("unshare.hostname", "box-1")]


def test_provider_param_override_from_command_line(tmp_path: Path) -> None:
    policy = load(tmp_path, "os-sandbox=bwrap\nbwrap.hostname=a\n", cli=[("bwrap.hostname", "b")])
    assert [(r.value, r.origin) for r in policy.provider_params] == [("b", ARG.__class__(None, 1))]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "os-sandbox=bwrap\nbwrap.hostnam=x",
            "bwrap.hostnam=x: unknown bwrap parameter 'hostnam' (known: bwrap.hostname)",
        ),
        (
            "os-sandbox=landlock\nlandlock.abi=3",
            "unknown landlock parameter 'abi' (known: landlock.unix-sockets)",
        ),
        ("os-sandbox=subprocess\nsubprocess.x=3", "unknown subprocess parameter 'x' (known: none)"),
        ("os-sandbox=landlock\nlandlock.unix-sockets=maybe", "'maybe' is not true or false"),
        ("os-sandbox=bwrap\nbwrap.hostname=a b", "'a b' is not a host name"),
        ("os-sandbox=unshare\nunshare.hostname=-x", "'-x' is not a host name: 1-63 letters"),
        ("os-sandbox=bwrap\nbwrap.hostname=a.b", "'a.b' is not a host name"),
        ("os-sandbox=qemu\nqemu.memory=lots", "'lots' is not a size"),
        ("os-sandbox=qemu\nqemu.memory=1", "'1' is too little for the guest: at least 128M"),
        ("os-sandbox=qemu\nqemu.memory=64M", "'64M' is too little for the guest"),
        ("os-sandbox=qemu\nqemu.cpus=0", "'0' is not a count from 1 to 1024"),
        ("os-sandbox=qemu\nqemu.accel=hvf", "'hvf' is not an accelerator"),
        ("os-sandbox=qemu\nqemu.kernel=", "empty path"),
        ("os-sandbox=bwrap\nbwrap.hostname=a\nbwrap.hostname=b", "bwrap.hostname is single-valued"),
    ],
)
def test_provider_param_errors(tmp_path: Path, text: str, message: str) -> None:
    found = one_problem(tmp_path, text + "\n")
    assert message in found, found


# -- command-line rules --------------------------------------------------------------------------


def test_command_line_rules_have_arg_origin_and_override_single_keys(tmp_path: Path) -> None:
    (tmp_path / "etc#x").mkdir()
    policy = load(
        tmp_path,
        "os-sandbox=landlock\npython-import=json\n",
        cli=[("os-sandbox", "none"), ("python-import", "csv"), ("expose-ro", "./etc#x")],
    )
    assert policy.os_sandbox.value == "none"
    assert policy.os_sandbox.origin is not None and policy.os_sandbox.origin.is_arg
    assert str(policy.os_sandbox.origin) == "<arg>"
    assert [r.name for r in policy.python_import] == ["json", "csv"]
    assert policy.expose_ro[0].path == str(tmp_path / "etc#x")  # '#' is literal in an option
    assert [line.origin.is_arg for line in policy.lines] == [False, False, True, True, True]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (("os-sandbox", "vm"), "<arg>: os-sandbox=vm: unknown provider"),
        (("include", "x"), "<arg>: --include=x: include is a directive of rule files"),
        (("Bad Key", "x"), "<arg>: --Bad Key=x: 'Bad Key' is not a key"),
        (("denials", "f"), "<arg>: unknown key 'denials': the denials file is a command-line"),
        (("learn", "${X"), "<arg>: --learn=${X: '${X' must be followed by '}'"),
        (("python-import", "a\nb"), "<arg>: bad module name 'a\\nb' in python-import"),
    ],
)
def test_command_line_rule_errors(tmp_path: Path, rule: tuple[str, str], message: str) -> None:
    found = problems(tmp_path, "", cli=[rule])
    assert len(found) == 1 and found[0].startswith(message), found
    assert "\n" not in found[0]


def test_command_line_single_key_twice(tmp_path: Path) -> None:
    found = problems(tmp_path, "", cli=[("os-sandbox", "none"), ("os-sandbox", "bwrap")])
    assert found == [
        "<arg>: os-sandbox is single-valued and already set in the command line at <arg> "
        "(os-sandbox=none)"
    ]


def test_no_file_gives_the_command_line_policy(tmp_path: Path) -> None:
    from pysandboxes.policy import load_policy

    policy = load_policy(
        str(tmp_path / "nope"), cli_rules=[("python-import", "json")], environ={}, cwd="/"
    )
    assert policy.main_file == str(tmp_path / "nope")
    assert policy.rule_files == ()
    assert [r.name for r in policy.python_import] == ["json"]
    assert load_policy(None, environ={}, cwd="/").main_file is None


def test_unreadable_main_file(tmp_path: Path) -> None:
    from pysandboxes.errors import ConfigError
    from pysandboxes.policy import load_policy

    (tmp_path / "dir").mkdir()
    with pytest.raises(ConfigError) as info:
        load_policy(str(tmp_path / "dir"), environ={}, cwd=str(tmp_path))
    assert str(info.value) == "dir: cannot read the rule file: Is a directory"


def test_json_round_trip_of_a_full_policy(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    text = (
        "os-sandbox=bwrap\nbwrap.hostname=sb\nlearn=false\nenv=A=${A:-x}\nunenv=B_*\n"
        "expose-ro=./data\nexpose-rw=/tmp\nignore=*.pem\npython-import=json\n"
        "python-api=ALLOW:os.system\nnet=ALLOW|TCP|x.org|80-90,443|OUT\neval-call=len\n"
        'include "./missing"\n'
    )
    policy = load(tmp_path, text)
    assert Policy.from_json(policy.to_json()) == policy


def test_path_that_no_file_can_have(tmp_path: Path) -> None:
    from pysandboxes.errors import ConfigError
    from pysandboxes.policy import parse_text

    with pytest.raises(ConfigError) as info:
        parse_text("expose-ro=\ud800\n", str(tmp_path / "r"), environ={}, cwd=str(tmp_path))
    assert str(info.value) == "r(1): '\\ud800' cannot be encoded as a file name"


def test_learn_without_a_file_and_without_a_rule_file() -> None:
    from pysandboxes.errors import ConfigError
    from pysandboxes.policy import load_policy

    with pytest.raises(ConfigError) as info:
        load_policy(None, cli_rules=[("learn", "")], environ={}, cwd="/")
    assert str(info.value) == "<arg>: learn= without a file name needs a rule file"


def test_policy_replace(tmp_path: Path) -> None:
    policy = load(tmp_path, "python-import=json\n")
    changed = policy.replace(python_import=())
    assert changed.python_import == () and changed.main_file == policy.main_file
    assert policy.python_import  # unchanged


def test_rule_file_path_no_file_can_have() -> None:
    from pysandboxes.errors import ConfigError
    from pysandboxes.policy import load_policy

    with pytest.raises(ConfigError, match="bad rule file path: a path cannot contain a NUL"):
        load_policy("/tmp/a\0b", environ={}, cwd="/")


def test_acknowledge_items(tmp_path: Path) -> None:
    policy = load(
        tmp_path,
        "acknowledge=all.no-enforcer, files.system-trees\n",
        cli=[("acknowledge", "net.name-by-address")],
    )
    assert [(r.name, r.origin.is_arg) for r in policy.acknowledge] == [
        ("all.no-enforcer", False),
        ("files.system-trees", False),
        ("net.name-by-address", True),
    ]
    assert Policy.from_data(policy.to_data()).acknowledge == policy.acknowledge


@pytest.mark.parametrize("value", ["NoEnforcer", "all.", ".x", "all no-enforcer", "a.b.c"])
def test_acknowledge_errors(tmp_path: Path, value: str) -> None:
    found = one_problem(tmp_path, f"acknowledge={value}\n")
    assert "bad acknowledge item" in found or "empty item" in found, found
