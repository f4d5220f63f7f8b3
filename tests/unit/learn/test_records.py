"""The guard's record stream: parsing, deduplication, split lines, bad lines."""

from __future__ import annotations

import json

from pysandboxes.learn.records import (
    ApiAccess,
    EnvAccess,
    EnvScan,
    EvalAccess,
    FileAccess,
    ImportAccess,
    ImportListing,
    ModuleRoot,
    NetAccess,
    Recording,
)


def lines(*records: dict[str, object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_every_kind_is_parsed_and_deduplicated() -> None:
    rec = Recording()
    rec.feed(
        lines(
            {"kind": "file", "op": "read", "path": "/a/b"},
            {"kind": "file", "op": "read", "path": "/a/b"},
            {"kind": "file", "op": "write", "path": "/a/b"},
            {
                "kind": "net",
                "proto": "tcp",
                "host": None,
                "ip": "1.2.3.4",
                "port": 80,
                "dir": "out",
            },
            {
                "kind": "net",
                "proto": "*",
                "host": "a.example",
                "ip": "",
                "port": None,
                "dir": "OUT",
            },
            {"kind": "import", "name": "xml.dom"},
            {"kind": "env", "name": "HOME"},
            {"kind": "api", "function": "os.system", "category": "process-exec"},
            {"kind": "eval", "syntax": ["arith"], "calls": ["len"]},
        )
    )
    rec.close()
    assert list(rec.accesses) == [
        FileAccess("/a/b", False),
        FileAccess("/a/b", True),
        NetAccess("TCP", None, "1.2.3.4", 80, "OUT"),
        NetAccess("TCP", "a.example", "", 0, "OUT"),
        ImportAccess("xml.dom"),
        EnvAccess("HOME"),
        ApiAccess("os.system", "process-exec"),
        EvalAccess((("eval-call", "len"), ("eval-syntax", "arith"))),
    ]
    assert ImportAccess("xml.dom").top_level == "xml"
    assert rec.bad_lines == 0


def test_lines_split_across_reads_and_unterminated_last_line() -> None:
    data = lines({"kind": "env", "name": "A"}, {"kind": "env", "name": "B"}).rstrip(b"\n")
    rec = Recording()
    for i in range(len(data)):
        rec.feed(data[i : i + 1])
    assert list(rec.accesses) == [EnvAccess("A")]
    rec.close()
    assert list(rec.accesses) == [EnvAccess("A"), EnvAccess("B")]


def test_bad_lines_are_counted_and_skipped_not_fatal() -> None:
    rec = Recording()
    rec.feed(b"not json\n[1]\n" + lines({"kind": "nope"}, {"kind": "env", "name": "OK"}))
    rec.feed(lines({"kind": "net", "ip": "1.1.1.1", "port": 99999, "proto": "TCP", "dir": "OUT"}))
    rec.feed(b'{"kind": "file", "op": "delete", "path": "/x"}\n\xff\xfe\n')
    assert list(rec.accesses) == [EnvAccess("OK")]
    assert rec.bad_lines == 6


def test_audit_denials_are_kept_once_each() -> None:
    denial = {
        "kind": "import",
        "target": "socket",
        "rule": None,
        "origin": None,
        "suggestion": "python-import=socket",
        "detail": None,
    }
    rec = Recording()
    rec.feed(lines({"kind": "import", "name": "socket", "denial": denial}) * 3)
    assert len(rec.denials) == 1
    ((found, access),) = rec.denials.values()
    assert found.suggestion == "python-import=socket"
    assert access == ImportAccess("socket")


def test_a_read_and_a_write_of_the_same_file_are_two_denials() -> None:
    def denial(op: str) -> dict[str, object]:
        return {
            "kind": "file",
            "target": "/x/f",
            "rule": None,
            "origin": None,
            "suggestion": f"expose-{'rw' if op == 'write' else 'ro'}=/x",
            "detail": op,
        }

    rec = Recording()
    for op in ("read", "write", "read"):
        rec.add({"kind": "file", "op": op, "path": "/x/f", "denial": denial(op)})
    assert [d.detail for d, _ in rec.denials.values()] == ["read", "write"]


def test_scans_listings_and_module_roots_are_their_own_kinds() -> None:
    rec = Recording()
    rec.feed(
        lines(
            {"kind": "env-scan"},
            {"kind": "env-scan"},
            {"kind": "file", "op": "read", "path": "/p", "by": "import-system"},
            {"kind": "module-root", "path": "/p/src"},
            {"kind": "module-root"},  # no path: a bad line, counted
        )
    )
    rec.close()
    assert list(rec.accesses) == [EnvScan(), ImportListing("/p"), ModuleRoot("/p/src")]
    assert rec.of_type(FileAccess) == []  # a listing is not a file read of the program's
    assert rec.bad_lines == 1
