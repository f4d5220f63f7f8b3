# rule: expose-rw=.
# rule: python-import=socket,os
# expect: file PermissionError

"""Objective: connect to a Unix socket in a directory no rule exposes.
"""

from _harness import attempt


def payload():
    import os, socket
    target = open('usock.txt').read()
    cwd = os.getcwd()
    common = os.path.commonpath([cwd, target])
    depth = len(os.path.relpath(target, common).split('/'))
    address = os.path.relpath(target) + '\0' + '/..' * depth + '/' + os.path.relpath(cwd, common) + '/x'
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(address)
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
