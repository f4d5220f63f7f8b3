# rule: expose-ro=.
# rule: python-import=ssl
# expect: file PermissionError

"""Objective: make OpenSSL read ../outside/secret.txt (not exposed) as a CA file through
SSLContext.load_verify_locations (no audit event in CPython 3.11); OpenSSL's parse error shows
that the file was read.
"""

from _harness import attempt


def payload():
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations('../outside/secret.txt')
    except ssl.SSLError as exc:
        return 'read by OpenSSL: ' + str(exc)
    return 'loaded'


attempt(payload)
