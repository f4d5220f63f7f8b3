"""``python -m pysandboxes`` is ``python-sb``."""

from pysandboxes.launch.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
