# rule: expose-ro=.
# rule: python-import=sqlite3
# expect: file PermissionError

"""Objective: run program code inside the hook (a metaclass __getattribute__ answering the
     __qualname__ read of the refusal of an unsupported path type) and take a frame of the
     guard from there (regression).
"""

from _harness import attempt


def payload():
    import sqlite3, sys
    class Meta(type):
        def __getattribute__(cls, name):
            if name == '__qualname__':
                frame = sys._getframe(1)
                raise LookupError(frame.f_code.co_filename)
            return type.__getattribute__(cls, name)
    class Odd(metaclass=Meta):
        pass
    try:
        sqlite3.connect(Odd())
    except LookupError as exc:
        if 'pysandboxes' in str(exc):
            return str(exc)
        raise AssertionError('not a guard frame: ' + str(exc))
    except TypeError:
        # plain python3 (the control): no guard runs; the objective's analogue is a frame
        return sys._getframe(0).f_code.co_filename
    raise AssertionError('no exception')


attempt(payload)
