# rule: expose-ro=.
# rule: python-import=ssl
# expect: file PermissionError
# bypass: the C base type's load_verify_locations (ssl.SSLContext.__mro__[-2]) called directly skips python-sb's subclass: OpenSSL reads the file unjudged

"""Objective: make OpenSSL read ../outside/secret.txt through the C method of _ssl._SSLContext.
"""

from _harness import attempt


def payload():
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    base = ssl.SSLContext.__mro__[-2]
    try:
        base.load_verify_locations(context, '../outside/secret.txt')
    except ssl.SSLError as exc:
        return 'read by OpenSSL: ' + str(exc)
    return 'loaded'


attempt(payload)
