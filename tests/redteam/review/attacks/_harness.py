"""Shared by every review attack: run the payload, print one ``RESULT {json}`` line.

- ``{"result": "reached", "detail": ...}`` (exit 0): the payload returned: the attack worked;
- ``{"result": "denied", "exc": ..., "sandbox_error": ..., "builtins": [...], "denials": [...]}``
  (exit 3): a python-sb refusal stopped it (``pysandboxes.sandbox_denials`` records);
- ``{"result": "failed", ...}`` (exit 4): the objective was not reached for another reason.

No import at module level: the rules of an attack need not allow ``json`` (JSON is written by
hand below), and what the harness imports must not change what the attack can import.
"""

import sys


def _json(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        out = []
        for ch in value:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ord(ch) < 0x20 or ord(ch) > 0x7E:
                out.append("\\u%04x" % (ord(ch) & 0xFFFF))
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(_json(str(k)) + ": " + _json(v) for k, v in value.items()) + "}"
    return _json(repr(value))


def attempt(payload):
    try:
        detail = payload()
    except BaseException as exc:  # the refusal may be any Rule*Error
        denials = []
        sandbox_error = False
        try:
            import pysandboxes

            denials = [d.to_dict() for d in pysandboxes.sandbox_denials(exc)]
            sandbox_error = isinstance(exc, pysandboxes.SandBoxError)
        except ImportError:
            pass
        builtins = [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]
        report = {
            "result": "denied" if denials else "failed",
            "exc": type(exc).__name__,
            "sandbox_error": sandbox_error,
            "builtins": builtins,
            "denials": denials,
            "message": str(exc)[:400],
        }
        print("RESULT " + _json(report), flush=True)
        sys.exit(3 if denials else 4)
    print("RESULT " + _json({"result": "reached", "detail": repr(detail)[:200]}), flush=True)
    sys.exit(0)
