# rule: expose-ro=.
# rule: python-import=os
# expect: api RuleApiPermissionError

"""Objective: dig the original os.setuid out of the wrapper's closure and call it.

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import os

    def original_setuid():
        for cell in getattr(os.setuid, '__closure__', None) or ():
            for inner in getattr(cell.cell_contents, '__closure__', None) or ():
                gen = getattr(inner.cell_contents, '__self__', None)
                if gen is not None and hasattr(gen, 'gi_frame'):
                    return gen.gi_frame.f_locals['fn']
        return os.setuid  # plain Python: os.setuid is the original

    original_setuid()(os.getuid())


attempt(payload)
