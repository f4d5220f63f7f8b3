# rule: expose-ro=.
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after renumbering the access codes in the guard's
module namespace.

Every guard module is in ``sys.modules`` and an attribute of ``pysandboxes.guard`` (``import
pysandboxes`` is always allowed). The file handlers are closures, but they read the access
codes ``NONE, RO, RW, IGNORED`` (and ``_WRITE_FLAGS``, ``FD``) from
``pysandboxes.guard.files``'s globals at every judgment: with ``RO`` equal to ``NONE``, a path
no rule exposes passes the ``code == RO and not write`` test.
"""

from _harness import attempt


def payload():
    try:
        import pysandboxes.guard.files as files
    except ImportError:  # plain python3 (the control): nothing to renumber
        pass
    else:
        files.RO = files.NONE
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
