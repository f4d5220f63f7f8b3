# rule: expose-ro=.
# rule: python-import=gc
# rule: python-api=ALLOW:gc.set_debug
# expect: file PermissionError

"""Objective: read ../outside/secret.txt after planting an entry in the guard's open cache.
"""

from _harness import attempt


def payload():
    import gc
    def fail():
        open('../outside/secret.txt').close()  # refused under python-sb: raised inside the hook
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fail()
    except PermissionError as exc:
        exc.cycle = exc  # garbage, with its traceback and the guard's frames
        del exc
    except OSError:
        pass
    gc.collect()
    gc.set_debug(0)
    frames = [o for o in gc.garbage if type(o).__name__ == 'frame']
    gc.garbage.clear()

    opens = [f for f in frames if repr(f).endswith('code on_open>')]
    if opens:
        opens[0].f_locals['cache']['../outside/secret.txt'] = 2  # RW
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
