"""Partial mode (SPEC §6): only the functions marked ``@sandbox`` run in a sandboxed worker.

- ``api``: ``sandbox``, ``sandboxes``, ``run``, ``is_in_sandbox`` (re-exported by
  ``pysandboxes``);
- ``pool``: :class:`~pysandboxes.partial.pool.Worker`, one sandboxed worker process and its
  calls (also the entry point for other packages, such as the eval guard);
- ``spawn``: the worker's launch, through the command line's planning and start path
  (``launch/start.py``);
- ``shipping``: functions sent by value; ``results``: results and exceptions decoded as data;
- ``errors``: the partial-mode errors (all ``SandBoxError``).

The worker's side is ``worker`` (the call loop and the frame format, run in the sandboxed
interpreter: ``launch/child.py`` loads it by name for the program kinds ``worker`` and
``eval-worker``). See docs/partial.md.
"""
