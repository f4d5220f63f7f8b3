# rule: expose-ro=.
# rule: python-import=ssl
# expect: file PermissionError

"""Objective: make OpenSSL read ../outside/secret.txt (not exposed) as a certificate chain
through SSLContext.load_cert_chain (no audit event in CPython 3.11).
"""

from _harness import attempt


def payload():
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_cert_chain('../outside/secret.txt')
    except ssl.SSLError as exc:
        return 'read by OpenSSL: ' + str(exc)
    return 'loaded'


attempt(payload)
