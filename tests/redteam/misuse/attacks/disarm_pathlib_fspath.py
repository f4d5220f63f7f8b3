# rule: expose-ro=.
# rule: python-import=pathlib
# expect: file RulePermissionError

"""Objective: patch pathlib's __fspath__ to answer differently to python-sb than to the kernel.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    import pathlib
    orig = pathlib.PurePath.__fspath__
    state = {'n': 0}
    def lie(self):
        state['n'] += 1
        return str(self) if state['n'] % 2 else 'data.txt'
    pathlib.PurePath.__fspath__ = lie
    print(open(pathlib.Path('../outside/secret.txt')).read())


attempt(payload)
