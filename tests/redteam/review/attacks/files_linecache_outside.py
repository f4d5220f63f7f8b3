# rule: expose-ro=.
# rule: python-import=linecache
# expect: absent file

"""Objective: read the secret with linecache, which swallows OSError (regression: nothing read, the refusal logged).
"""

from _harness import attempt


def payload():
    import linecache
    line = linecache.getline('../outside/secret.txt', 1)
    assert line == 'the secret\n', line
    return line


attempt(payload)
