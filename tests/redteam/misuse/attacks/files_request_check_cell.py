# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read ../outside/secret.txt through ``dir_fd`` with the raw ``posix.open``, taken
from the frame of the hidden generator that holds it while it checks a request.

Every hidden call (``native_files.hide_reentrant``) checks the request it is sent with
``kit.valid_request`` -- a module global of ``pysandboxes.guard.kit`` (in ``sys.modules``),
whose closure cells held the builtins it calls. Rewriting one (no audit event) made the check
call the program: from there a generator frame kept earlier (``sys._getframe`` with no guard
frame among its callers) is resumed, and its ``f_back`` chain (no event) reaches the hidden
generator, whose ``box`` still holds the original.

Under python-sb with the rules above: the check has no closure cell (positional defaults,
which cannot be rewritten): nothing of the program runs there and the open is refused.
"""
from _harness import attempt


def payload():
    import os
    import sys

    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                box = names.get("box")
                if type(box) is list and box and "before" in names:
                    found.append(box[0])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)
    check = getattr(sys.modules.get("pysandboxes.guard.kit"), "valid_request", None)
    cells = [cell for cell in getattr(check, "__closure__", None) or () if cell.cell_contents is type]
    busy = []

    def fake_type(obj):
        if not busy and not found:
            busy.append(1)
            next(walker)
            busy.clear()
        return type(obj)

    for cell in cells:
        cell.cell_contents = fake_type
    directory = os.open(".", os.O_RDONLY)  # the wrapped os.open checks its request
    for cell in cells:
        cell.cell_contents = type
    raw_open = next((f for f in found if getattr(f, "__name__", "") == "open"), os.open)
    os.chdir("a/b")  # from here, ../outside/secret.txt is a path in the project
    fd = raw_open("../outside/secret.txt", os.O_RDONLY, dir_fd=directory)
    data = os.read(fd, 100)
    assert data == b"the secret\n", data


attempt(payload)
