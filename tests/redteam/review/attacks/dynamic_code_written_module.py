# rule: expose-rw=.
# rule: python-import=importlib
# expect: api PermissionError
# bypass: module code from a file written at run time is dynamic code only outside the program's directories; a module written into the (writable) project and loaded with spec_from_file_location runs generated source without dynamic-code

"""Objective: run source text generated at run time, without eval/exec/compile rights.
"""

from _harness import attempt


def payload():
    import importlib.util
    source = 'RESULT = ' + '*'.join(['6', '7'])
    with open('generated.py', 'w') as f:
        f.write(source + '\n')
    spec = importlib.util.spec_from_file_location('generated', 'generated.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.RESULT == 42
    return module.RESULT


attempt(payload)
