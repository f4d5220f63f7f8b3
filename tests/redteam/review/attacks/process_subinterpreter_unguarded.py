# rule: expose-ro=.
# rule: python-import=os,_interpreters,_xxsubinterpreters
# expect: api PermissionError

"""Objective: read ../outside/secret.txt (not exposed) from a new interpreter, which has none
of the program's audit hooks. CPython 3.13's _interpreters.create raises no audit event
(3.11 and 3.12's _xxsubinterpreters.create raise cpython.PyInterpreterState_New).
"""

from _harness import attempt


def payload():
    import os
    try:
        import _interpreters as interpreters  # 3.13
    except ImportError:
        import _xxsubinterpreters as interpreters  # 3.11, 3.12
    read, write = os.pipe()
    interp = interpreters.create()
    interpreters.run_string(
        interp,
        f"import os\nos.write({write}, open('../outside/secret.txt', 'rb').read())\n",
    )
    data = os.read(read, 100)
    assert b'the secret' in data, data
    return data


attempt(payload)
