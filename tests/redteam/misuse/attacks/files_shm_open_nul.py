# rule: expose-rw=.
# rule: python-import=os,_posixshmem
# expect: absent
# until: 3.13 _posixshmem refuses a NUL in the name itself (ValueError)

"""Objective: create a file in /dev/shm (no rule grants it) with a name the guard reads
differently: shm_open stops at a NUL, the guard judged the whole name
("x\\0/../../<project>/f" is a file of the writable project to it; issue 18, class 5).

Under python-sb with the rules above: the name is refused (ValueError, as CPython refuses a
NUL in every other path) and nothing is created.
"""
from _harness import attempt

NAME = 'pysb_nul_attack_' + __import__('os').urandom(4).hex()


def payload():
    import os
    import _posixshmem
    project = os.getcwd().lstrip('/')
    fd = _posixshmem.shm_open(NAME + '\x00/../../' + project + '/f', os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    try:
        if not os.path.exists('/dev/shm/' + NAME):
            raise RuntimeError('not created')
    finally:
        _posixshmem.shm_unlink(NAME)


attempt(payload)
