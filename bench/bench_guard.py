"""The cost of the Python layer on guarded operations, against plain python3 in the same run.

Targets (issue 4): open+read of a small file and a TCP connect to loopback <= 1.3x, os.stat
<= 1.1x. Also measured: import of an allowed module (removed from sys.modules each time),
getaddrinfo('localhost'), os.stat when ignore= rules are present (the only case where
python-sb wraps os.stat), and the start-up cost of arming the layer (python-sb with and
without it). The ``file events, permissive rules`` cases time the events of issue 29
(``os.scandir``, ``open`` for reading and writing, ``os.mkdir`` with ``os.rmdir``) on a path
three components below the work directory, under the rules of ``bench_cpython.py``
(``python-api=ALLOW:*``: no decision cache).
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from cases import PYTHON_SB, CommandCase, SnippetCase

_PORT_FILE = "port.txt"


def setup(workdir: Path) -> None:
    (workdir / "small.txt").write_text("hello, world\n" * 4)
    (workdir / ".py-sandboxes").write_text(
        "expose-ro=.\n"
        "python-import=os,importlib,colorsys,socket,time,sys\n"
        "net=ALLOW|TCP|127.0.0.1|*|OUT\n"
    )
    (workdir / "ignore.py-sandboxes").write_text(
        "expose-ro=.\npython-import=os,time,sys\nignore=*.pem\nignore=.env\n"
    )
    (workdir / "permissive.py-sandboxes").write_text(
        "python-import=*\npython-api=ALLOW:*\nexpose-ro=/\n"
        f"expose-rw={workdir}\nenv=*=${{*}}\nnet=ALLOW|*|*|*|*\n"
    )
    deep = workdir / "deep" / "a" / "b"
    deep.mkdir(parents=True, exist_ok=True)
    (deep / "f.txt").write_text("x\n")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(512)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    (workdir / _PORT_FILE).write_text(str(server.getsockname()[1]))


def _default(workdir: Path) -> list[str]:
    return ["--os-sandbox=subprocess"]


def _with_ignore(workdir: Path) -> list[str]:
    return ["--os-sandbox=subprocess", f"--pysandboxes-config={workdir / 'ignore.py-sandboxes'}"]


def _permissive(workdir: Path) -> list[str]:
    return [
        "--os-sandbox=subprocess",
        f"--pysandboxes-config={workdir / 'permissive.py-sandboxes'}",
    ]


#: The permissive cases' directory (five components below /) and file, as absolute paths.
_DEEP = "import os\nd = os.path.join(os.getcwd(), 'deep', 'a', 'b')\nf = os.path.join(d, 'f.txt')"

CASES: list[CommandCase | SnippetCase] = [
    CommandCase(
        name="guard: start-up, Python layer on vs off",
        command=lambda w: [PYTHON_SB, "--os-sandbox=subprocess", str(w / "hello.py")],
        baseline=lambda w: [
            PYTHON_SB,
            "--os-sandbox=subprocess",
            "--py-sandbox=false",
            str(w / "hello.py"),
        ],
    ),
    SnippetCase(
        name="guard: open+read small file",
        init="",
        body="with open('small.txt') as f:\n    f.read()",
        loops=5000,
        sb_args=_default,
        target_ratio=1.3,
    ),
    SnippetCase(
        name="guard: os.stat",
        init="import os",
        body="os.stat('small.txt')",
        loops=20000,
        sb_args=_default,
        target_ratio=1.1,
    ),
    SnippetCase(
        name="guard: os.stat with ignore= rules",
        init="import os",
        body="os.stat('small.txt')",
        loops=5000,
        sb_args=_with_ignore,
    ),
    SnippetCase(
        name="guard: import an allowed module",
        init="import importlib, sys",
        body="sys.modules.pop('colorsys', None)\nimportlib.import_module('colorsys')",
        loops=300,
        sb_args=_default,
    ),
    SnippetCase(
        name="guard: TCP connect to loopback",
        init=f"import socket\nport = int(open('{_PORT_FILE}').read())",
        body="s = socket.create_connection(('127.0.0.1', port))\ns.close()",
        loops=300,
        sb_args=_default,
        target_ratio=1.3,
    ),
    SnippetCase(
        name="guard: getaddrinfo('localhost')",
        init="import socket",
        body="socket.getaddrinfo('localhost', 80, type=socket.SOCK_STREAM)",
        loops=1000,
        sb_args=_default,
    ),
    SnippetCase(
        name="guard: os.scandir, file events, permissive rules",
        init=_DEEP,
        body="os.scandir(d).close()",
        loops=5000,
        sb_args=_permissive,
    ),
    SnippetCase(
        name="guard: open for reading, file events, permissive rules",
        init=_DEEP,
        body="open(f).close()",
        loops=5000,
        sb_args=_permissive,
    ),
    SnippetCase(
        name="guard: open for writing, file events, permissive rules",
        init=_DEEP,
        body="open(f, 'a').close()",
        loops=5000,
        sb_args=_permissive,
    ),
    SnippetCase(
        name="guard: os.mkdir + os.rmdir, file events, permissive rules",
        init=_DEEP + "\nn = os.path.join(d, 'n')",
        body="os.mkdir(n)\nos.rmdir(n)",
        loops=2000,
        sb_args=_permissive,
    ),
]
