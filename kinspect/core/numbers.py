"""How kinspect writes a number, in every view: the inspector, `explain`, the Markdown
report and the Ranks tab say `22.5 µs`, `×1.49`, `22.4–22.7` and `3.932` alike, so a
figure copied from one reads the same in another.

Lies under every core subpackage, beside `errors`.
"""

from __future__ import annotations

US = "µs"


def us(value: float) -> str:
    """Microseconds without the unit (a column titled `µs`): one decimal."""
    return f"{value:.1f}"


def us_text(value: float) -> str:
    return f"{us(value)} {US}"


def spread(low: float | None, high: float | None) -> str:
    """A p20–p80 range (empty where either end is unknown)."""
    return "" if low is None or high is None else f"{us(low)}–{us(high)}"


def ratio(value: float) -> str:
    """A time over another (regret, slowdown): `×1.49`."""
    return f"×{value:.2f}"


def share(value: float) -> str:
    """A fraction as a whole percentage: `93%`."""
    return f"{100 * value:.0f}%"


def distance(value: float) -> str:
    """A heuristic's distance, always three decimals (ties show as equal text)."""
    return f"{value:.3f}"
