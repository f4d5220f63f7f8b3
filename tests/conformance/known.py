"""The conformance matrix's currently failing cells: cell id -> reason (the one place to edit).

Each entry becomes ``xfail(strict=True)``: when a fix lands the cell passes, the strict xfail
turns red, and the entry must be removed. A cell id is ``CASE@CONFIG`` (``CASE@python3`` for a
control); reasons name the point of issue 11 that covers the cell.
"""

from __future__ import annotations

KNOWN_FAILURES: dict[str, str] = {}
