# ruff: noqa: SIM115, E501
"""A legitimate program under rules like the attacks': everything it does is granted.

Prints one line per check; the test expects them all and exit status 0.
"""

import json
import os
import pathlib
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass


@dataclass
class Point:
    x: int
    y: int


print("read", open("data.txt").read().strip())
print("pathlib", pathlib.Path("data.txt").read_text().strip())
print("listdir", "data.txt" in os.listdir("."))
print("exists", os.path.exists("data.txt"), os.path.exists("../outside/secret.txt"))
os.makedirs("out/deep", exist_ok=True)
with open("out/deep/result.json", "w") as handle:
    json.dump({"point": Point(1, 2).__dict__}, handle)
shutil.copy("out/deep/result.json", "out/copy.json")
os.rename("out/copy.json", "out/moved.json")
os.remove("out/moved.json")
print("written", json.load(open("out/deep/result.json")))
with tempfile.NamedTemporaryFile("w", delete=False) as tmp:
    tmp.write("scratch")
print("tempfile", open(tmp.name).read(), tmp.name.startswith(tempfile.gettempdir()))
with zipfile.ZipFile("out/a.zip", "w") as archive:
    archive.writestr("x.txt", "zipped")
print("zip", zipfile.ZipFile("out/a.zip").read("x.txt").decode())
db = sqlite3.connect("out/db.sqlite")
db.execute("create table t(x)")
db.execute("insert into t values (1)")
print("sqlite", db.execute("select x from t").fetchone()[0])
db.close()
port = int(open("port.txt").read())
with socket.create_connection(("127.0.0.1", port), timeout=5):
    print("connect", "ok")
print("resolve", socket.getaddrinfo("localhost", port, type=socket.SOCK_STREAM)[0][4][0])
print("subprocess", subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())
print("symlink", os.path.islink("link_to_secret"))
os.symlink("../data.txt", "out/link_in")
print("linked", open("out/link_in").read().strip())
print("env", os.environ.get("GRANTED_VAR"))
try:
    import yaml  # noqa: F401  (not installed, or not allowed: the fallback must work)
except ImportError:
    print("fallback", "ok")
print("done", "ok")
