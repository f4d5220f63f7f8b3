# rule: expose-ro=.
# rule: python-import=_thread
# expect: api PermissionError
# was-bypass (fixed by the guard in a4dd50e, kept as a regression): as process_fork_exec_cell, for _thread.start_new_thread: a thread starts without the threads right

"""Objective: run a thread without the threads right.
"""

from _harness import attempt


def payload():
    import _thread
    for cell in getattr(_thread.start_new_thread, '__closure__', None) or ():
        if type(cell.cell_contents) is str:
            cell.cell_contents = 'nothing.to.see'
    done = _thread.allocate_lock()
    done.acquire()
    box = []
    def work():
        box.append(_thread.get_ident())
        done.release()
    _thread.start_new_thread(work, ())
    assert done.acquire(timeout=5)
    return box[0] != _thread.get_ident()


attempt(payload)
