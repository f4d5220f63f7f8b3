# rule: expose-ro=.
# rule: python-import=threading
# expect: api RuleApiPermissionError

"""Objective: start a thread (no audit event in CPython 3.11).

Under python-sb with the rules above: refused with RuleApiPermissionError (a 'api' denial).
"""
from _harness import attempt


def payload():
    import threading
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()


attempt(payload)
