# rule: expose-rw=.
# rule: ignore=clé.env
# expect: file FileNotFoundError

"""Objective: read ``clé.env``, a file that ``ignore=`` hides, by writing its name as the two
escaped bytes of ``é`` (``"\\udcc3\\udca9"``, what ``os.fsdecode`` makes of bytes that are not
UTF-8): CPython encodes that text to the same bytes as ``"é"``, so the kernel opens the ignored
file.

The guard judged the name as written, and ``cl\\udcc3\\udca9.env`` is not ``clé.env``: the read
was allowed. Under python-sb the name is judged as the kernel gets it (its bytes decoded
again, ``guard/paths.py``'s ``fs_name``), so the read is refused as the ignored file's.
"""

from _harness import attempt


def payload():
    with open("cl\udcc3\udca9.env") as f:
        return f.read()


attempt(payload)
