"""Guarded evaluation of source text (the ``eval-*`` rules, SPEC §3.6; ``docs/eval.md``).

``check`` parses and judges a source against a profile's rules, ``rewrite`` puts the run-time
checks in, ``runtime`` holds the helpers and budgets, ``engine`` caches checked code and runs
it, ``api`` is :func:`guarded_eval` and the backend seam, ``worker`` the default backend (a
warm worker process) and ``channel`` its protocol, ``fork`` a process per call. Imported only
when used (never on python-sb's start-up path unless the rule file has ``eval-*`` lines).
"""
