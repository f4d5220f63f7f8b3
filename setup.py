"""The one part of the build that pyproject.toml cannot state: the optional compiled accelerator.

``pysandboxes.guard._accelerator`` (src/pysandboxes/guard/_accelerator.c) speeds up the Python
layer's audit hook; it is built when a C compiler and the interpreter's headers are there, and
the install goes on without it when they are not (``optional=True``): the guard then uses its
pure-Python code of the same meaning (pysandboxes/guard/accelerator.py, docs/performance.md).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pysandboxes.guard._accelerator",
            ["src/pysandboxes/guard/_accelerator.c"],
            optional=True,
        )
    ]
)
