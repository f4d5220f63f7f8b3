# rule: expose-ro=.
# expect: import ModuleNotFoundError
# bypass: built-in modules are never stashed (stash_modules skips sys.builtin_module_names), so 'import _imp' (or gc, marshal, _io...) needs no rule although the standard library is not exempt (SPEC 3.3)

"""Objective: import the built-in module _imp with no python-import rule.
"""

from _harness import attempt


def payload():
    import _imp
    return _imp.extension_suffixes()


attempt(payload)
