"""The project under test (a sample)."""


def add(a: int, b: int) -> int:
    return a + b
