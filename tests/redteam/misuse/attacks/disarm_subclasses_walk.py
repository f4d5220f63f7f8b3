# rule: expose-ro=.
# expect: file RulePermissionError

"""Objective: walk object.__subclasses__() for the guard's state, then read the secret.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial).
"""
from _harness import attempt


def payload():
    found = [c for c in object.__subclasses__() if 'guard' in getattr(c, '__module__', '')]
    for cls in found:
        for value in vars(cls).values():
            cells = getattr(value, '__closure__', None) or ()
            for cell in cells:
                try:
                    d = cell.cell_contents
                except ValueError:
                    continue
                if isinstance(d, dict):
                    d[__import__('os').path.abspath('../outside/secret.txt')] = 2
    print(open('../outside/secret.txt').read())


attempt(payload)
