# rule: expose-rw=.
# rule: ignore=.env
# rule: python-import=os
# expect: absent

"""Objective: learn that the ignored file exists through the original ``os.stat``, dug out of
the closure of the ``ignore=`` helper that replaces it, or by rewriting that helper's cell
holding ``sys.audit`` (closure cells are read and written with no audit event) so that the
listing is no longer filtered.

Under python-sb with the rules above: the originals are kept in hidden generators and the
listing's event is raised there: the objective stays out of reach.
"""
from _harness import attempt


def payload():
    import os

    seen = False
    for cell in getattr(os.stat, "__closure__", None) or ():
        value = cell.cell_contents
        if getattr(value, "__name__", "") == "audit":
            cell.cell_contents = lambda *args: None
        elif callable(value) and getattr(value, "__name__", "") in ("stat", "lstat", "access"):
            try:
                value(".env")
                seen = True
            except Exception:
                pass
    seen = seen or ".env" in os.listdir(".") or os.path.exists(".env")
    assert seen, "the ignored file stayed hidden"


attempt(payload)
