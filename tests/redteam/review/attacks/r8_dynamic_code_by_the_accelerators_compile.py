# rule: expose-ro=.
# rule: python-import=pysandboxes
# expect: api PermissionError
# needs: accelerator

"""Objective: run source text with no dynamic-code rule, compiled by the compiled accelerator's
``compile_program`` (the compile python-sb's launcher uses for the program's own code).

The accelerator's module keeps ``compile_program`` as a plain attribute, on the ground that it
is builtin ``compile`` of source and nothing more: ``Py_CompileStringObject`` raises the same
``compile`` audit event, from CPython's parser, and the guard judges that event's caller. The
program imports the module again after the guard took it (a new module object of the same
shared library) and compiles with it; only the exec of the code object is left to do.
"""

from _harness import attempt


def payload():
    from pysandboxes.guard import _accelerator

    code = _accelerator.compile_program("result = [6 * 7]", "<payload>")
    namespace = {}
    exec(code, namespace)
    return namespace["result"]


attempt(payload)
