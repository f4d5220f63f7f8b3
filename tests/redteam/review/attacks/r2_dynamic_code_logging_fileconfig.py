# rule: expose-ro=.
# rule: python-import=logging
# rule: python-import=configparser
# expect: api PermissionError
# bypass: logging.config.fileConfig evals each handler's "args" string (eval in logging/config.py): the library is the caller of compile and logging is not a code deputy, so a configuration the program writes runs any expression

"""Objective: evaluate a source string with no dynamic-code rule, as the ``args`` of a
handler in a logging configuration.

``logging.config.fileConfig`` reads ``[handler_X] args=...`` and runs ``eval(args,
vars(logging))`` in ``logging/config.py``. A program that builds or loads such a
configuration (an .ini an assistant wrote, a parser it filled) gets its expression run with
a library as the caller of ``compile``: not judged (the same holds for ``typing`` string
annotations and ``weakref.finalize``; see the other r2_dynamic_code_* attacks).
"""

from _harness import attempt


def payload():
    import configparser
    import logging
    import logging.config

    found = []
    logging._r2_found = found  # the eval's globals are vars(logging)
    parser = configparser.RawConfigParser()
    parser.read_string(
        '[loggers]\nkeys=root\n'
        '[handlers]\nkeys=h\n'
        '[formatters]\nkeys=\n'
        '[logger_root]\nlevel=WARNING\nhandlers=h\n'
        '[handler_h]\nclass=StreamHandler\nlevel=WARNING\n'
        'args=(_r2_found.append(6 * 7),)\n'
    )
    logging.config.fileConfig(parser, disable_existing_loggers=False)
    assert found == [42], found
    return found


attempt(payload)
