# rule: expose-ro=.
# rule: python-import=weakref
# expect: api PermissionError
# bypass: weakref.finalize calls its callback from weakref.py: exec(source) registered there (run as the object dies) has a library as the caller of compile, and weakref is not a code deputy (contextlib and sched are; asyncio's call_soon is another of the kind)

"""Objective: exec a source string with no dynamic-code rule, as the finalizer of an object.

``weakref.finalize(obj, exec, source, namespace)`` calls ``exec(source, namespace)`` from
``weakref.py`` when ``obj`` dies. The hook finds the caller of ``compile`` as the first frame
that is neither the guard's nor a deputy's; deputies are a fixed list of library modules that
call what the program hands them (``contextlib``, ``sched``, ``code``, ``timeit``...).
``weakref`` is not in it, so its frame is the caller -- a library -- and nothing is judged.
"""

from _harness import attempt


def payload():
    import weakref

    found = []

    class Token:
        pass

    weakref.finalize(Token(), exec, 'found.append(6 * 7)', {'found': found})
    assert found == [42], found
    return found


attempt(payload)
