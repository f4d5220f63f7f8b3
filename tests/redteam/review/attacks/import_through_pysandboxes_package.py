# rule: expose-ro=.
# expect: import ModuleNotFoundError

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
