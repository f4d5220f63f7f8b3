# rule: expose-ro=.
# expect: import ModuleNotFoundError
# bypass: 'pysandboxes' is always importable, and its submodules are library code: importing pysandboxes.providers.netns loads socket, subprocess, shutil, tempfile... which the program then imports with no rule (no import event for a loaded module)

"""Objective: import socket and subprocess with no python-import rule at all.
"""

from _harness import attempt


def payload():
    try:
        import pysandboxes.providers.netns  # noqa: F401
    except ImportError:
        pass  # plain python3 (the control) may lack nothing: socket is importable anyway
    import socket, subprocess
    return (socket.__name__, subprocess.__name__)


attempt(payload)
