# rule: expose-ro=.
# rule: python-import=os
# expect: file RulePermissionError

"""Objective: read a file outside every exposure through a path that begins with the
interpreter's own library directory (which the Python layer lets be read by a test of the text
alone) and climbs out of it with '..' components.

Under python-sb with the rules above: refused with RulePermissionError (a 'file' denial): a
text with a '.' or '..' component is resolved and judged (guard/paths.names_plainly), a name
that merely begins with a dot is not such a component.
"""
from _harness import attempt


def payload():
    import os
    library = os.path.dirname(os.__file__)
    secret = os.path.abspath(os.path.join('..', 'outside', 'secret.txt'))
    print(open(library + '/..' * library.count('/') + secret).read())


attempt(payload)
