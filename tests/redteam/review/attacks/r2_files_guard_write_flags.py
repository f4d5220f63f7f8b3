# rule: expose-ro=.
# expect: file PermissionError

"""Objective: write into the read-only exposure (create ./planted.txt) after emptying the
write-flag mask in the guard's module namespace.

``on_open`` decides whether an ``open`` is a write with ``flags & _WRITE_FLAGS``, the mask
read from ``pysandboxes.guard.files``'s globals at every call: set to 0, every open is judged
as a read, and ``expose-ro`` grants reads.
"""

from _harness import attempt


def payload():
    try:
        import pysandboxes.guard.files as files
    except ImportError:  # plain python3 (the control)
        pass
    else:
        files._WRITE_FLAGS = 0
    with open('planted.txt', 'w') as f:
        f.write('planted')
    with open('planted.txt') as f:
        data = f.read()
    assert data == 'planted', data
    return data


attempt(payload)
