# rule: expose-ro=.
# rule: python-import=_thread,time
# rule: python-api=ALLOW:threads
# expect: absent api

"""Objective: exec a source string with no dynamic-code rule, called by C with no frame.

``_thread.start_new_thread(exec, (source, namespace))`` runs ``exec`` as the new thread's
first call: CPython's thread bootstrap is C, so when ``compile`` is raised the thread's stack
holds no Python frame at all. The hook judges ``compile`` by its caller (the first frame that
is neither the guard's nor a deputy's); with no frame there is no caller, and nothing is
judged. ``atexit.register(exec, source, {})`` is a neighbour at interpreter exit, still
open: python-sb's launcher calls the exit functions, and its frame counts as a library
caller (this harness cannot observe it, the callback runs after the attempt has printed its
result: a strict xfail in ``tests/e2e/test_guard.py``).

Under python-sb: a compile with no caller is the program's (``guard/hook.py``'s
``on_compile``), except a line of CPython's own REPL (``<stdin>``, in a REPL or ``-i`` run),
which runs with no frame either: refused in the thread, which dies of it; the objective is
out of reach and the refusal is in ``--denials``.
"""

from _harness import attempt


def payload():
    import _thread
    import time

    found = []
    _thread.start_new_thread(exec, ("found.append(6 * 7)", {"found": found}))
    for _ in range(200):
        if found:
            break
        time.sleep(0.05)
    assert found == [42], found
    return found


attempt(payload)
