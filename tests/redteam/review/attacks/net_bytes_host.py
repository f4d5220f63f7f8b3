# rule: expose-ro=.
# rule: python-import=socket
# expect: net ConnectionRefusedError
# bypass: a bytes host in an AF_INET address is accepted by CPython (idna_converter) but judge_inet returns without judging anything that is not a str

"""Objective: connect with no net= rule, the host given as bytes (b'127.0.0.1').
"""

from _harness import attempt


def payload():
    import socket
    port = int(open('port.txt').read())
    s = socket.socket()
    s.settimeout(5)
    s.connect((b'127.0.0.1', port))
    data = s.recv(16)
    s.close()
    assert data == b'hello', data
    return data


attempt(payload)
