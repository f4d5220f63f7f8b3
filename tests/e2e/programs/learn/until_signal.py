"""Do a few things, say "ready", then wait to be ended (SIGTERM/SIGINT/SIGHUP tests), or end
with an uncaught exception or sys.exit when asked (argv[1] = "raise" / "exit")."""

import json
import os
import sys
import time

with open(os.path.join("data", "in.json"), encoding="utf-8") as handle:
    data = json.load(handle)
print("ready", os.environ.get("UNTIL_NAME", "?"), len(data), flush=True)
how = sys.argv[1] if len(sys.argv) > 1 else "wait"
if how == "raise":
    raise RuntimeError("the program failed")
if how == "exit":
    sys.exit(3)
time.sleep(60)
