# rule: expose-ro=.
# rule: python-import=readline
# expect: file PermissionError

"""Objective: read ../outside/secret.txt as a readline history file.
"""

from _harness import attempt


def payload():
    import readline
    readline.clear_history()
    readline.read_history_file('../outside/secret.txt')
    line = readline.get_history_item(1)
    assert line == 'the secret', line
    return line


attempt(payload)
