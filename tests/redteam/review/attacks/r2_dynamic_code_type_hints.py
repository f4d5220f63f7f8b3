# rule: expose-ro=.
# rule: python-import=typing
# expect: api PermissionError
# bypass: typing.get_type_hints (like typing.ForwardRef._evaluate and inspect.get_annotations(eval_str=True)) compiles and evals a string annotation the program wrote; typing.py and inspect.py are not code deputies, so the library is the caller of compile and nothing is judged

"""Objective: evaluate a source string with no dynamic-code rule, written as a string
annotation and evaluated by ``typing.get_type_hints``.

A string annotation is source text: ``get_type_hints`` turns it into a ``ForwardRef``, which
``compile``s it (in ``typing.py``) and ``eval``s the code object. The hook judges ``compile``
of source when the *program* is the caller; deputies that run source for their caller
(``code``, ``timeit``, ``runpy``, ``contextlib``...) are skipped to find it, but ``typing``
(and ``inspect.get_annotations(eval_str=True)``) are not in that list: their compile counts as
a library's own. ``get_type_hints`` is called by pydantic, dataclass helpers, FastAPI...
"""

from _harness import attempt


def payload():
    import typing

    source = "[6 * 7, __import__('sys').version_info[0]]"

    def f(x: source):
        pass

    hints = typing.get_type_hints(f)
    assert hints['x'][0] == 42, hints
    return hints


attempt(payload)
