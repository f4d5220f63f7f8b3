"""What a legitimate program does with files under the same rules; every step must work.
argv: READABLE_FILE WRITABLE_DIR. Prints {"step": "ok" | "error text"} as JSON."""

import hashlib
import json
import os
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import threading

readable, work = sys.argv[1], sys.argv[2]
results = {}


def step(name, fn):
    try:
        fn()
        results[name] = "ok"
    except Exception as exc:  # every failure is reported, none hidden
        results[name] = f"{type(exc).__name__}: {exc}"


def rw_cycle():
    path = os.path.join(work, "data.txt")
    with open(path, "w") as f:
        f.write("one\n")
    with open(path, "a") as f:
        f.write("two\n")
    os.truncate(path, 4)
    os.mkdir(os.path.join(work, "sub"))
    os.rename(path, os.path.join(work, "sub", "moved.txt"))
    os.symlink("moved.txt", os.path.join(work, "sub", "link.txt"))
    assert open(os.path.join(work, "sub", "link.txt")).read() == "one\n"
    os.remove(os.path.join(work, "sub", "link.txt"))
    os.remove(os.path.join(work, "sub", "moved.txt"))
    os.rmdir(os.path.join(work, "sub"))


def child_cat():
    out = subprocess.run(["/bin/cat", readable], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr


def child_python():
    code = f"print(open({readable!r}).read(), end='')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr


def sqlite():
    db = sqlite3.connect(os.path.join(work, "db.sqlite"))
    db.execute("create table t (x)")
    db.execute("insert into t values (1)")
    db.commit()
    db.close()


def threads():
    box = []
    t = threading.Thread(target=lambda: box.append(hashlib.sha256(b"x").hexdigest()))
    t.start()
    t.join()
    assert box


step("read_exposed", lambda: open(readable).read())
step("list_exposed", lambda: os.listdir(os.path.dirname(readable)))
step("write_cycle", rw_cycle)
step("tempfile", lambda: tempfile.NamedTemporaryFile().write(b"x"))
step("dev_null_urandom", lambda: (open("/dev/null", "w").write("x"), os.urandom(16)))
step("child_cat", child_cat)
step("child_python", child_python)
step("ssl_default_certs", lambda: ssl.create_default_context())
step("sqlite_in_workdir", sqlite)
step("threads", threads)
step("socketpair", lambda: __import__("socket").socketpair())
step("getuser_without_USER", lambda: __import__("getpass").getuser())
print(json.dumps(results))
