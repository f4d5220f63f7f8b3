"""Shared by every attack program: run the payload, say whether it reached its objective.

Exit status and first output line:

- ``OBJECTIVE REACHED`` (0): the payload returned -- the attack worked;
- ``DENIED <type> <denials>`` (3): a python-sb refusal stopped it (``sandbox_denials`` records);
- ``FAILED <type> <message>`` (4): the objective was not reached for another reason.

Copied next to the attack by the test; the attack calls ``attempt(payload)``.
"""

import sys


def attempt(payload):
    try:
        payload()
    except BaseException as exc:  # the refusal may be any Rule*Error
        denials = []
        try:
            import pysandboxes

            denials = [d.to_dict() for d in pysandboxes.sandbox_denials(exc)]
        except ImportError:
            pass
        if denials:
            print("DENIED", type(exc).__name__, repr(denials), flush=True)
            sys.exit(3)
        print("FAILED", type(exc).__name__, str(exc)[:300], flush=True)
        sys.exit(4)
    print("OBJECTIVE REACHED", flush=True)
    sys.exit(0)
