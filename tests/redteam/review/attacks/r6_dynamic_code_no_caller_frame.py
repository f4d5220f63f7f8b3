# rule: expose-ro=.
# rule: python-import=_thread,sys,time
# rule: python-api=ALLOW:threads
# expect: absent api

"""Objective: exec a source string with no dynamic-code rule, called by C with no frame.

``_thread.start_new_thread(exec, (source, namespace))`` runs ``exec`` as the new thread's
first call: CPython's thread bootstrap is C, so when ``compile`` is raised the thread's stack
holds no Python frame at all. The hook judges ``compile`` by its caller (the first frame that
is neither the guard's nor a deputy's); with no frame there is no caller, and nothing is
judged. ``atexit.register(exec, source, {})`` is its neighbour at interpreter exit
(python-sb's launcher runs the exit functions; this harness cannot observe it, the callback
runs after the attempt has printed its result: ``tests/e2e/test_guard.py``).

Under python-sb (``guard/hook.py``'s ``on_compile``): a string compiled with no caller is the
program's; a compile with no Python frame at all under another name is CPython's own (its
traceback display parses the line it shows, its REPL compiles the line it read). Refused in
the thread, which dies of it: the objective is out of reach, the refusal in ``--denials``.
"""

from _harness import attempt


def payload():
    import _thread
    import sys
    import time

    found = []
    ended = []
    # The thread either runs the source or dies of its refusal, which CPython reports to
    # sys.unraisablehook: wait for one of the two, not for a time that a loaded machine
    # could overrun (the deadline only keeps a hung thread from hanging the test).
    sys.unraisablehook = lambda unraisable: ended.append(unraisable.exc_type)
    _thread.start_new_thread(exec, ("found.append(6 * 7)", {"found": found}))
    deadline = time.monotonic() + 120
    while not found and not ended and time.monotonic() < deadline:
        time.sleep(0.01)
    assert found == [42], found
    return found


attempt(payload)
