# rule: expose-rw=.
# rule: python-import=os,site
# expect: absent api

"""Objective: run source text without the dynamic-code grant: site.addsitedir executes the
'import' lines of the .pth files it reads, and the program writes one.

Under python-sb with the rules above: the line is refused (site reports the refusal and goes
on; an "api" denial):
site is a deputy, the .pth file's code is the program's dynamic code.
"""
from _harness import attempt


def payload():
    import os
    import site
    os.makedirs('sitedir', exist_ok=True)
    with open('sitedir/evil.pth', 'w') as handle:
        handle.write("import os; os.environ['PTH_RAN'] = 'yes'\n")
    site.addsitedir(os.path.abspath('sitedir'))
    if os.environ.get('PTH_RAN') != 'yes':
        raise RuntimeError('the .pth line did not run')


attempt(payload)
