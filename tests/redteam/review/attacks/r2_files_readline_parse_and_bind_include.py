# rule: expose-ro=.
# rule: ignore=.env
# rule: python-import=readline
# rule: python-import=os
# expect: file FileNotFoundError

"""Objective: read the ignored .env through readline.parse_and_bind('$include FILE').

``parse_and_bind`` runs one init-file line; ``$include`` makes libreadline open and parse
another file, with no audit event, and every line that is no valid binding is echoed to
stderr in libreadline's error message (``readline: FILE: line 1: TOKEN=abc: no key sequence
terminator``). The program points fd 2 at a pipe of its own and reads the line back. Only the
four file functions of ``readline`` are wrapped. (A line with a space -- ``the secret`` -- parses as a
binding and is not echoed; lines without one -- ``KEY=VALUE``, base64 lines of a private
key -- are.)
"""

from _harness import attempt


def payload():
    import os
    import readline

    read_end, write_end = os.pipe()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    try:
        readline.parse_and_bind('$include .env')
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write_end)
    leaked = os.read(read_end, 4096).decode()
    os.close(read_end)
    assert 'TOKEN=abc' in leaked, leaked
    return leaked


attempt(payload)
