"""Hold capabilities in the sandbox (any, in the user namespace it runs in, is reach into the
kernel's privileged code: mounts, raw sockets, file ownership...). argv: KEPT_MASK (hex: the
capabilities a provider keeps on purpose). Reached when the effective, permitted, inheritable
or ambient set holds another one (the bounding set only limits what an exec could gain, and
no_new_privs already forbids any gain)."""

import sys
from _verdict import attempt

KEPT = int(sys.argv[1], 16)


def held():
    sets = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("CapEff", "CapPrm", "CapInh", "CapAmb"):
                sets[name] = int(value, 16)
    extra = {name: hex(value & ~KEPT) for name, value in sets.items() if value & ~KEPT}
    return f"HELD {extra}" if extra else f"none beyond {KEPT:#x}: {sets}"


attempt("capabilities", held, secret="HELD")
