"""The light NamedTuple the guard uses at run time instead of typing's."""

from __future__ import annotations

import pytest

from pysandboxes.record import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int = 0

    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


def test_fields_defaults_and_tuple_behaviour() -> None:
    point = Point(3, y=-4)
    assert (point.x, point.y) == (3, -4)
    assert point == (3, -4) and isinstance(point, tuple)
    assert Point(1) == (1, 0)
    assert point.norm1() == 7
    assert Point._fields == ("x", "y")
    assert repr(point) == "Point(3, -4)"
    assert Point.__doc__ == "A point."


def test_immutable_and_strict() -> None:
    point = Point(1, 2)
    with pytest.raises(AttributeError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        point.z = 5  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, 3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, w=2)  # type: ignore[call-arg]
