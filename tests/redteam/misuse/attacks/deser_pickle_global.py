# rule: expose-ro=.
# rule: python-import=pickle
# expect: api RuleApiPermissionError

"""Objective: unpickle data that calls os.getpid (any global).

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import pickle
    print(pickle.loads(b'cos\ngetpid\n(tR.'))


attempt(payload)
