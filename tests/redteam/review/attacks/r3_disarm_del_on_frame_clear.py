# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
``__del__`` that the hook itself triggers by clearing a finished guard frame -- while it holds
the ``busy`` mark that lets the guard's own events through. No module but ``sys``.

1. ``posix.setuid(Obj())`` is refused (``pysandboxes.call``); the refusal leaves through the
   wrapper's frames (``_wrapper``'s ``wrapper`` and ``hide``'s ``call``, guard code), which
   stay in its traceback holding their locals: ``args``, the only reference left to ``Obj()``.
2. The program reads ``tb_frame`` of the innermost entry. The hook's ``on_getattr`` (inside
   ``enter()``: busy mark set, collector paused) calls ``guard_running``, which *clears* every
   finished guard frame it meets ("it holds nothing any more"). Clearing drops ``args``: the
   refcount of ``Obj()`` falls to zero and its ``__del__`` runs right there -- program code
   under ``on_getattr`` and ``_hook_body``, with the thread marked busy (the read itself is
   then refused as introspection, too late).
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
        while tb.tb_next is not None:
            tb = tb.tb_next
        try:
            tb.tb_frame
        except Exception:  # refused as introspection, after the frames were cleared
            pass
        tb = None
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
