# rule: expose-ro=.
# rule: python-import=os,gc
# expect: api PermissionError

"""Objective: obtain a frame object from the innermost level of an OSError's traceback
     through gc.garbage (under python-sb, a frame of the guard).
"""

from _harness import attempt


def payload():
    import gc, os
    def fail():
        os.listdir('..')  # refused under python-sb: raised inside the hook
        os.listdir('/nonexistent directory')  # plain python3 (the control): this frame
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        try:
            fail()
        except OSError as exc:
            exc.cycle = exc  # make it garbage with its traceback and frames
            innermost = exc.__traceback__
            while innermost.tb_next is not None:
                innermost = innermost.tb_next
            lineno = innermost.tb_lineno
            del exc, innermost
        gc.collect()
        frames = [o for o in gc.garbage if type(o).__name__ == 'frame' and o.f_lineno == lineno]
    finally:
        gc.set_debug(0)
    assert frames, 'no frame found'
    return repr(frames[0])


attempt(payload)
