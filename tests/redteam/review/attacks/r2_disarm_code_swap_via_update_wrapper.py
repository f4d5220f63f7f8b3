# rule: expose-ro=.
# rule: python-import=functools
# expect: api PermissionError

"""Objective: read ../outside/secret.txt after replacing the code of the hook's body.

``pysandboxes.guard.hook._hook_body`` is the function the audit hook (a ``partial``) calls
for every event; it is a module attribute (``import pysandboxes`` is always allowed).
Assigning ``__code__`` is introspection when the *program* assigns it; when a library does
(``functools.update_wrapper`` copies the attributes it is told to with ``setattr``) the
caller is ``functools.py`` and nothing is judged -- reading ``quiet.__code__`` there is a
library's own read too. The hook keeps calling the same function object, now with a body
that returns at once.
"""

from _harness import attempt


def payload():
    import functools

    try:
        import pysandboxes.guard.hook as hook
    except ImportError:  # plain python3 (the control)
        pass
    else:

        def quiet(*args, **kwargs):
            return None

        functools.update_wrapper(hook._hook_body, quiet, assigned=('__code__',), updated=())
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
