"""A tiny third-party package that reads its own data file (importlib.resources)."""

from importlib import resources


def banner(word: str) -> str:
    frame = resources.files(__package__).joinpath("data", "frame.txt").read_text("utf-8")
    left, right = frame.strip().split("|")
    return f"{left} {word} {right}"
