"""The host of the way-back attacks on partial mode (``test_wayback_partial.py``, issue 25): a
program that calls a hostile tool through a sandboxed worker and prints one JSON line saying
what came back.

argv: RULES ATTACK HOST [control]

- ``HOST`` is ``sync`` (``Worker.call``) or ``async`` (``Worker.acall`` in ``asyncio.run``),
  the two ways a host waits for a worker;
- ``control`` reaches the attack's objective without the protection: the same bytes decoded by
  plain ``pickle`` or read by the path python-sb had before issue 25, or the tool run
  unsandboxed -- so each attack is shown to be one.

The tools run in the worker with the Python layer off (``py-sandbox=false``): the worker is
taken as wholly the attacker's, held only by its provider, and may write any bytes on its
socket (:func:`answer` forges a frame for its own call, or another's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import linecache
import os
import pickle
import socket
import sys
import threading
import time
from typing import Any

from pysandboxes.partial import worker as wire
from pysandboxes.partial.pool import Worker

#: The hosts' result limit (small: an attack's objective is to pass it).
MAX_RESULT = 1 << 20
#: Nesting of the forged deques (a host thread with a 1 MiB stack crashes freeing them).
DEPTH = 20_000
SMALL_STACK = 1 << 20
DEQUE = b"\x8c\x0bcollections\x8c\x05deque\x93\x94"


# -- what the hostile worker runs ----------------------------------------------------------------


def answer(kind: bytes, body: bytes, trickle: float = 0.0, ident_delta: int = 0) -> None:
    """Inside the worker: write a frame answering this call (or the call ``ident_delta`` away),
    then never answer on its own. The call's id and token are read from the worker's frame."""

    import os
    import sys
    import time

    w = sys.modules["pysandboxes.partial.worker"]
    frame: Any = sys._getframe()
    while frame is not None and "token" not in frame.f_locals:
        frame = frame.f_back
    ident, token = frame.f_locals["ident"] + ident_delta, frame.f_locals["token"]
    data = w.encode_frame(kind, ident, body, token)
    fd = w._servers[0].fd
    if trickle:
        for byte in data:
            os.write(fd, bytes([byte]))
            time.sleep(trickle)
    else:
        while data:
            data = data[os.write(fd, data) :]
    time.sleep(120)


def deep_deques() -> bytes:
    return b"\x80\x05" + DEQUE + b"h\x00]" * DEPTH + b"N" + b"a\x85R" * DEPTH + b"."


class ByteBomb:
    """Pickles as ``bytearray(64 MiB)``: 30 bytes that the host would allocate."""

    def __reduce__(self) -> Any:
        return (bytearray, (64 << 20,))


class FractionText:
    """Pickles as ``Fraction('1e100000')``: the host would compute 10**100000."""

    def __reduce__(self) -> Any:
        import fractions

        return (fractions.Fraction, ("1e100000",))


class FractionGcd:
    """Pickles as an unnormalised ``Fraction`` of two huge integers (their gcd, in the host)."""

    def __reduce__(self) -> Any:
        import fractions

        return (fractions.Fraction, (3**40_000, 2**70_000 + 1))


def shared_record() -> dict[str, Any]:
    node: list[Any] = ["leaf"]
    for _ in range(40):
        node = [node, node]
    return {"module": "builtins", "qualname": "ValueError", "message": "m", "args": [node]}


def forged_frames(secret: str) -> dict[str, Any]:
    frames = [[secret, 1, "forged"], ["/dev/zero", 1, "zero"], ["/dev/stdin", 1, "stdin"]]
    return {
        "module": "builtins",
        "qualname": "ValueError",
        "message": "m",
        "args": ["m"],
        "frames": frames,
    }


class ToolInterrupt(BaseException):
    """A tool's own BaseException: it passes a host's ``except Exception``."""


def tool(attack: str, secret: str) -> Any:
    """The hostile tool (runs in the worker)."""

    if attack == "bytearray":
        return ByteBomb()
    if attack == "fraction_text":
        return FractionText()
    if attack == "fraction_gcd":
        return FractionGcd()
    if attack == "shared":
        return ["x" * 10_000] * 700
    if attack == "deque_depth":
        answer(b"R", deep_deques())
    if attack == "record_sharing":
        answer(b"E", pickle.dumps(shared_record(), 5))
    if attack == "forged_frames":
        answer(b"E", pickle.dumps(forged_frames(secret), 5))
    if attack == "trickle":
        answer(b"R", pickle.dumps("trickled", 5), trickle=0.3)
    if attack == "forge_other_call":
        answer(b"R", pickle.dumps("forged", 5), ident_delta=-1)
    if attack == "escape_output":
        print("tool output \x1b]52;c;cm0gLXJmIH4K\x07 \x1b[2J")
        return "printed"
    if attack == "base":
        raise BaseException("plain")
    if attack == "tool_base":
        raise ToolInterrupt("mine")
    if attack == "cancelled":
        raise asyncio.CancelledError()
    raise AssertionError(attack)


def slow() -> str:
    import time

    time.sleep(3)
    return "honest"


# -- the host ------------------------------------------------------------------------------------


def _outcome(run: Any) -> dict[str, Any]:
    try:
        value = run()
    except Exception as exc:  # what a host's ``except Exception`` sees
        notes = "\n".join(getattr(exc, "__notes__", []) or [])
        return {
            "outcome": type(exc).__name__,
            "remote_type": getattr(exc, "remote_type", ""),
            "notes": notes[:5000],
        }
    except BaseException as exc:  # passed the host's except Exception
        return {"outcome": "escaped:" + type(exc).__name__}
    return {"outcome": "returned", "value": repr(value)[:200]}


def sandboxed(rules: str, attack: str, host: str, secret: str, raw: bool = False) -> dict[str, Any]:
    timeout = 2.0 if attack == "trickle" else 60.0
    with Worker(rules, max_result=MAX_RESULT, threads=2, raw_output=raw) as worker:
        if attack == "forge_other_call":
            return forge_other_call(worker, host, secret)
        if host == "sync":
            report = _in_small_stack(
                lambda: _outcome(lambda: worker.call(tool, (attack, secret), timeout=timeout))
            )
        else:

            async def main() -> dict[str, Any]:
                task = asyncio.current_task()
                try:
                    value = await worker.acall(tool, (attack, secret), timeout=timeout)
                except Exception as exc:
                    found = {
                        "outcome": type(exc).__name__,
                        "remote_type": getattr(exc, "remote_type", ""),
                    }
                    found["notes"] = "\n".join(getattr(exc, "__notes__", []) or [])[:5000]
                except BaseException as exc:
                    found = {"outcome": "escaped:" + type(exc).__name__}
                else:
                    found = {"outcome": "returned", "value": repr(value)[:200]}
                found["cancelled"] = bool(task and task.cancelling())
                return found

            report = _in_small_stack(lambda: asyncio.run(main()))
    return report


def forge_other_call(worker: Worker, host: str, secret: str) -> dict[str, Any]:
    """Call A (slow, honest) is in flight when call B forges an answer for A's id."""

    first: dict[str, Any] = {}

    def call_a() -> None:
        if host == "sync":
            first.update(_outcome(lambda: worker.call(slow, (), timeout=60)))
        else:
            first.update(_outcome(lambda: asyncio.run(worker.acall(slow, (), timeout=60))))

    thread = threading.Thread(target=call_a)
    thread.start()
    time.sleep(0.5)  # (not judged: either way A must not get B's forgery)
    second = _outcome(lambda: worker.call(tool, ("forge_other_call", secret), timeout=60))
    thread.join()
    return {"outcome": first.get("outcome"), "value": first.get("value"), "b": second["outcome"]}


def _in_small_stack(run: Any) -> Any:
    """``run()`` on a thread with a 1 MiB stack: a decoder that recurses to free what it
    decoded crashes there (a host's worker thread often has no more)."""

    found: list[Any] = []
    threading.stack_size(SMALL_STACK)
    thread = threading.Thread(target=lambda: found.append(run()))
    thread.start()
    thread.join()
    threading.stack_size(0)
    return found[0]


# -- the controls --------------------------------------------------------------------------------


def old_lists(value: Any, counter: list[int], depth: int = 0) -> Any:
    """The error record check python-sb had before issue 25 (a tree copy, depth-bounded), with
    a counter of the nodes it copies (stopped at 10**6 to keep the control cheap)."""

    counter[0] += 1
    if counter[0] > 10**6:
        raise OverflowError
    if depth > 32:
        return set()
    if type(value) is dict:
        return {k: old_lists(v, counter, depth + 1) for k, v in value.items()}
    if type(value) in (list, tuple):
        return [old_lists(v, counter, depth + 1) for v in value]
    return value


def old_read_frame(sock: socket.socket, timeout: float) -> bytes:
    """The sync read loop before issue 25: ``timeout`` for each read, not for the frame."""

    buffer = b""
    while True:
        if len(buffer) >= wire.HEADER:
            need = int.from_bytes(buffer[:4], "little") + 4
            if len(buffer) >= need:
                return buffer[:need]
        import select

        ready, _w, _x = select.select([sock], [], [], timeout)
        if not ready:
            raise TimeoutError
        buffer += sock.recv(1 << 16)


def control(attack: str, secret: str) -> dict[str, Any]:
    if attack in ("bytearray", "shared"):
        value = pickle.loads(pickle.dumps(tool(attack, secret), 5))
        return {
            "expanded": len(str(value)) if attack == "shared" else len(value),
            "limit": MAX_RESULT,
        }
    if attack in ("fraction_text", "fraction_gcd"):
        value = pickle.loads(pickle.dumps(tool(attack, secret), 5))
        return {"bits": max(value.numerator.bit_length(), value.denominator.bit_length())}
    if attack == "deque_depth":
        _in_small_stack(lambda: pickle.loads(deep_deques()) and None)
        return {"survived": True}  # (the crash ends the process first)
    if attack == "record_sharing":
        counter = [0]
        with contextlib.suppress(OverflowError):
            old_lists(shared_record(), counter)
        return {"copied": counter[0], "encoded": len(pickle.dumps(shared_record(), 5))}
    if attack == "forged_frames":
        frame = forged_frames(secret)["frames"][0]
        return {"line": linecache.getline(frame[0], frame[1])}
    if attack == "trickle":
        parent, child = socket.socketpair()
        data = wire.encode_frame(b"R", 1, pickle.dumps("trickled", 5))

        def trickle() -> None:
            for byte in data:
                child.send(bytes([byte]))
                time.sleep(0.3)

        threading.Thread(target=trickle, daemon=True).start()
        start = time.monotonic()
        frame = old_read_frame(parent, 2.0)
        return {
            "frame": len(frame) == len(data),
            "waited_past_timeout": time.monotonic() - start > 2.0,
        }
    if attack == "forge_other_call":
        # The old dispatch: an answer goes to whichever call has its id.
        pending = {1: "call A"}
        kind, ident, body = b"R", 1, pickle.dumps("forged", 5)
        return {"a_got": pickle.loads(body) if ident in pending and kind == b"R" else None}
    if attack in ("base", "tool_base", "cancelled"):
        return _outcome(lambda: tool(attack, secret))
    raise AssertionError(attack)


def main() -> None:
    rules, attack, host = sys.argv[1:4]
    secret = os.environ["WAYBACK_SECRET"]
    if "control" in sys.argv[4:] and attack == "escape_output":
        report = sandboxed(rules, attack, host, secret, raw=True)  # the option off: raw output
    elif "control" in sys.argv[4:]:
        report = control(attack, secret)
    else:
        report = sandboxed(rules, attack, host, secret)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
