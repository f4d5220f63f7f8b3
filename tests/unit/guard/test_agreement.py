"""The guard's arm-time tables agree with ``pysandboxes.policy.decide`` (the one precedence).

The guard compiles the rules into plain tuples at arm time (it may not call program-reachable
Python code while the program runs). The path and network matchers of both are made by
``policy/precedence.py`` (the first test checks that they are that module's closures, so no
second copy of the precedence can come back unseen); the others check, over many cases, that
the compiled forms answer exactly as ``decide`` does. Pure functions: nothing is armed here.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pysandboxes.guard import calls, files, imports, network
from pysandboxes.guard.kit import capture
from pysandboxes.policy import decide, parse_text, precedence
from pysandboxes.policy.model import Policy
from pysandboxes.runtime import RunContext

CODES = {files.NONE: None, files.RO: "ro", files.RW: "rw", files.IGNORED: "ignored"}


def _policy(tmp_path: Path, text: str) -> Policy:
    return parse_text(text, str(tmp_path / ".py-sandboxes"), cwd=str(tmp_path))


def test_the_matchers_are_precedences_own(tmp_path: Path) -> None:
    policy = _policy(tmp_path, f"expose-ro={tmp_path}\nignore=.env\nnet=ALLOW|TCP|*|443|OUT\n")
    path_code = precedence.make_path_matcher((), None, None, False, 0, 3).__code__
    windows_code = path_code  # one closure for both (Windows paths lowered, "\\" separating)
    net_code = precedence.make_net_matcher((), (), None).__code__
    guard_paths = files.make_access(files.build_table(policy, RunContext(), ()))
    guard_windows = files.make_access(files.build_table(policy, RunContext(), (), "windows"))
    decider = decide.compile_policy(policy)
    # POSIX rows grouped by first component, Windows not: one closure, precedence's, for both
    assert guard_paths.__code__ is path_code
    grouped = [
        cell.cell_contents
        for cell in guard_paths.__closure__ or ()
        if type(cell.cell_contents) is type(len) and cell.cell_contents.__name__ == "get"
    ]
    assert len(grouped) == 1 and len(grouped[0].__self__) >= 2  # several first components
    assert guard_windows.__code__ is windows_code
    assert decider.paths.match.__code__ is path_code
    assert network.make_matcher(network.build_rules(policy)).__code__ is net_code
    assert decider.net_match.__code__ is net_code


def test_paths_agree_with_decide(tmp_path: Path) -> None:
    root = tmp_path / "p"
    for sub in ("a/b/c", "a/rw", "a/rw/ro", "x", "y.pem.d"):
        (root / sub).mkdir(parents=True)
    policy = _policy(
        tmp_path,
        f"expose-ro={root}/a\nexpose-rw={root}/a/rw\nexpose-ro={root}/a/rw/ro\n"
        f"expose-rw={root}/x\nexpose-ro={root}/x\nignore=*.pem\nignore=.env\n"
        f"ignore={root}/a/b/c\n",
    )
    table = files.build_table(policy, RunContext(), ())
    access = files.make_access(table)
    names = [
        "",
        "a",
        "a/b",
        "a/b/c",
        "a/b/c/d",
        "a/bc",
        "a/rw",
        "a/rw/f",
        "a/rw/ro",
        "a/rw/ro/f",
        "a/rw/.env",
        "x",
        "x/f",
        "x/key.pem",
        "y.pem.d",
        "y.pem.d/f",
        "a/rw/ro/.env/z",
        "a/b/x.pem",
        "z",
        "a/",
    ]
    checked = 0
    for name in names:
        path = str(root / name) if name else str(root)
        assert CODES[access(path)[0]] == decide.path_access(policy, path), path
        checked += 1
    assert checked == len(names)


def test_bucketed_paths_agree_with_one_matcher(tmp_path: Path) -> None:
    """``files.make_access`` (rows grouped by first component, ``precedence.group_rows``)
    answers as the ungrouped matcher of every row, over the real default rows, narrower rules
    and the edge cases of the text."""

    (tmp_path / "w" / "sub").mkdir(parents=True)
    policy = _policy(
        tmp_path,
        f"expose-ro=/\nexpose-rw={tmp_path}/w\nexpose-ro={tmp_path}/w/sub\n"
        "expose-ro=/etc/ssl\nexpose-rw=/etc\nignore=.env\nignore=/var/secret\n",
    )
    for table in (
        files.build_table(policy, RunContext(tmpdir=str(tmp_path / "t")), ("/usr/lib",)),
        files.build_table(_policy(tmp_path, f"expose-rw={tmp_path}/w\n"), RunContext(), ()),
    ):
        rows = tuple((r.path, r.below, r.access, (r.rule, r.origin)) for r in table.rows)
        one = precedence.make_path_matcher(
            rows,
            table.ignore_names,
            table.ignore_anchored,
            False,
            files.NONE,
            files.IGNORED,
            grouped=False,
        )
        bucketed = files.make_access(table)
        texts = ["", "/", "//", "///", "relative", "a/b", "/etc/", "//etc/ssl", "/etc//ssl"]
        for row in table.rows:
            for tail in ("", "/", "//", "/x", "x", "/.env", "/x/../y", "/sub", "/sub/f"):
                texts.append(row.path + tail)
                texts.append(row.path.rstrip("/") + "/" + tail)
        texts += [str(tmp_path / "w" / "sub" / "f"), "/var/secret/k", "/var/secretary", "/tmpx"]
        texts += ["etc/ssl", "xetc/ssl", "xetc", "\\etc", "/etc\\ssl"]  # relative keys
        for text in texts:
            assert bucketed(text) == one(text), text


@pytest.mark.parametrize(
    "rules",
    [
        "net=ALLOW|TCP|127.0.0.1|*|OUT",
        "net=ALLOW|*|*|*|OUT\nnet=DENY|*|10.0.0.0/8|*|OUT",
        "net=ALLOW|UDP|::1|53|OUT\nnet=ALLOW|TCP|192.168.0.0/16|80,443,8000-8080|*",
        "net=ALLOW|TCP|api.example.com|443|OUT\nnet=DENY|TCP|*|25|OUT\nnet=ALLOW|*|*|*|IN",
        "net=DENY|*|::ffff:127.0.0.0/104|*|*\nnet=ALLOW|*|127.0.0.0/8|*|*",
    ],
)
def test_network_agrees_with_decide(tmp_path: Path, rules: str) -> None:
    policy = _policy(tmp_path, rules)
    match = network.make_matcher(network.build_rules(policy))
    ip_key = network.make_ip_key(capture())
    hosts = [None, "api.example.com", "other.example.com"]
    ips = [
        "127.0.0.1",
        "127.9.9.9",
        "10.1.2.3",
        "::1",
        "::ffff:10.1.2.3",
        "::ffff:127.0.0.1",
        "192.168.1.1",
        "203.0.113.9",
        "2001:db8::1",
    ]
    cases = 0
    for proto, host, ip, port, direction in itertools.product(
        ("TCP", "UDP"), hosts, ips, (25, 53, 80, 443, 8080, 9999), ("OUT", "IN")
    ):
        expected, rule = decide.net_decision(policy, proto, host, ip, port, direction)
        names = () if host is None else (host,)
        allowed, text, _origin = match(proto, names, ip_key(ip), port, direction)
        assert allowed == expected, (proto, host, ip, port, direction)
        assert text == (rule.text if rule else None), (proto, host, ip, port, direction)
        cases += 1
    assert cases == 648


def test_name_precheck_agrees_with_decide(tmp_path: Path) -> None:
    """Before resolution (address unknown) only host-name and ``*`` rules can allow."""

    policy = _policy(
        tmp_path, "net=ALLOW|TCP|api.example.com|443|OUT\nnet=ALLOW|TCP|10.0.0.0/8|*|OUT"
    )
    match = network.make_matcher(network.build_rules(policy))
    for host in ("api.example.com", "intranet.example.com"):
        expected, _ = decide.net_decision(policy, "TCP", host, "", 443, "OUT")
        assert match("TCP", (host,), None, 443, "OUT")[0] == expected


def test_api_agrees_with_decide(tmp_path: Path) -> None:
    policy = _policy(
        tmp_path,
        "python-api=ALLOW:process-exec\npython-api=DENY:os.system\npython-api=ALLOW:*\n"
        "python-api=DENY:native\npython-api=ALLOW:ctypes.dlopen\npython-api=DENY:ctypes.dlopen\n",
    )
    by_function, function_rules = calls.precompute(policy)
    for entry in calls.REGISTRY:
        for name in (entry.function, *entry.aliases):
            allowed, rule = decide.api_decision(policy, name, entry.category)
            assert by_function[name][0] == allowed, name
            assert by_function[name][1] == (rule.text if rule else None), name
    assert function_rules["os.system"][0] is False
    assert function_rules["ctypes.dlopen"][0] is False  # DENY wins at equal specificity


def test_imports_agree_with_decide(tmp_path: Path) -> None:
    for text in ("python-import=json,os\npython-import=numpy", "python-import=*", ""):
        policy = _policy(tmp_path, text)
        everything, names = imports.allowed_names(policy)
        for name in ("json", "os", "numpy", "socket", "ctypes", "json2"):
            assert (everything or name in names) == decide.import_allowed(policy, name), name


def test_registry_has_the_eight_categories() -> None:
    from pysandboxes.policy.model import API_CATEGORIES

    assert {entry.category for entry in calls.REGISTRY} == set(API_CATEGORIES)
    functions = [entry.function for entry in calls.REGISTRY]
    assert len(functions) == len(set(functions))
