# rule: expose-ro=.
# rule: python-import=readline
# expect: api PermissionError

"""Objective: read ../outside/secret.txt through readline's history file functions, after
swapping the default through which ``pysandboxes.guard.wrappers.hide`` builds every wrapper
(``_hide``, bound at import) for one that hands the original straight back.

``hide`` runs after arming too: modules created later (``readline`` here) are wrapped then.
Assigning ``__kwdefaults__`` (or ``__defaults__``, ``__code__``) of a function of the guard
is refused whoever asks; under plain python3 (the control) there is no guard to swap.
"""

from _harness import attempt


def payload():
    try:
        import pysandboxes.guard.wrappers as wrappers
    except ImportError:  # plain python3 (the control)
        pass
    else:

        def unguarded(fn, kit, before, after=None):
            return lambda args, kwargs: fn(*args, **kwargs)

        # ``_hide`` is the last positional default (it was a keyword default before r5).
        wrappers.hide.__defaults__ = (*wrappers.hide.__defaults__[:-1], unguarded)
    import readline

    readline.clear_history()
    readline.read_history_file('../outside/secret.txt')
    data = readline.get_history_item(1)
    assert data == 'the secret', data
    return data


attempt(payload)
