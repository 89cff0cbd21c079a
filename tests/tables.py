"""Reading what a command printed: rich tables as the terminal shows them."""

from __future__ import annotations


def cells(line: str) -> list[str]:
    """A table row as the terminal shows it, cell by cell."""
    return [c.strip() for c in line.split("│")[1:-1]]
