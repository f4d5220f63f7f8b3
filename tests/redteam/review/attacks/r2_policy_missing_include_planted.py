# rule: expose-rw=.
# rule: include "./.local.py-sandboxes"
# expect: file PermissionError

"""Objective: plant rules for the next run: create the file that the rule file includes but
that does not exist yet (``include "./.local.py-sandboxes"``, which the learned template ships
commented out for whoever runs the command).

The guard refuses writes to every *loaded* rule file; a missing include is skipped silently at
start, so its path is just a file in the writable exposure. The next ``python-sb`` run loads
it (``--explain`` lists it as loaded): ``expose-rw=/`` and ``python-api=ALLOW:*``. The same
holds for the user profile the template includes (``~/.config/py-sandboxes/
user-py-sandboxes.profile``) when the home directory is writable and the profile does not
exist yet: every project of the user would load it.
"""

from _harness import attempt


def payload():
    with open('.local.py-sandboxes', 'x') as f:
        f.write('expose-rw=/\npython-api=ALLOW:*\n')
    with open('.local.py-sandboxes') as f:
        data = f.read()
    assert 'expose-rw=/' in data, data
    return data


attempt(payload)
