# rule: expose-rw=.
# rule: python-import=os,_hashlib
# expect: api PermissionError

"""Objective: have OpenSSL start with a configuration of the program's (``OPENSSL_CONF``: a
configuration can load providers and engines, shared objects -- native code) without
``python-api=ALLOW:openssl.config``. Seen here as a configuration that loads only OpenSSL's
``base`` provider: SHA-256 is then unsupported.

The guard decides on its copy of the C environment, kept by the hidden ``os.putenv``'s
``after``, which decoded the name and value with ``os.fsdecode`` -- a Python function that
looks ``fspath`` up in the ``os`` module's namespace. With ``os.fspath`` the program's, its
code ran inside that ``after``; a generator frame kept earlier, resumed there, reached the
``after``'s frame through ``f_back`` (no audit event), whose names hold the copy itself: the
program took ``OPENSSL_CONF`` out of it, and nothing was judged when ``_hashlib`` was created.

Under python-sb with the rules above: the ``after`` decodes in C (the values were made exact
``str``/``bytes`` before the call): nothing of the program runs there, the copy keeps the
variable, and creating ``_hashlib`` is refused.
"""

from _harness import attempt

CONFIG = """openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
base = base_sect
[base_sect]
activate = 1
"""


def payload():
    import os
    import sys

    with open("ossl.cnf", "w") as f:
        f.write(CONFIG)
    found = []

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                copy = frame.f_locals.get("c_env")
                if type(copy) is dict:
                    found.append(copy)
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)
    real_fspath = os.fspath
    running = []

    def fspath(value):
        if not found and not running:
            running.append(1)
            next(walker)
            running.clear()
        return real_fspath(value)

    os.fspath = fspath
    try:
        os.putenv("OPENSSL_CONF", "ossl.cnf")
    finally:
        os.fspath = real_fspath
    for copy in found:
        copy.pop("OPENSSL_CONF", None)
    import _hashlib

    try:
        _hashlib.new("sha256", b"x")
    except ValueError:  # UnsupportedDigestmodError: the program's configuration was read
        return "base provider only"
    raise AssertionError("OpenSSL did not read the configuration")


attempt(payload)
