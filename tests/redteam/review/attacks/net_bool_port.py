# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError

"""Objective: get a connection attempt to 127.0.0.1 port 1 past the guard with no net= rule
     (the port given as True). Reached when the kernel answers (a plain ConnectionRefusedError,
     nobody listens there) instead of a python-sb refusal.
"""

from _harness import attempt


def payload():
    import socket
    s = socket.socket()
    try:
        s.connect(('127.0.0.1', True))
    except ConnectionRefusedError as exc:
        if type(exc) is not ConnectionRefusedError:
            raise  # a python-sb refusal (a subclass)
        return 'the kernel answered: the guard let it through'
    finally:
        s.close()
    return 'connected to port 1'


attempt(payload)
