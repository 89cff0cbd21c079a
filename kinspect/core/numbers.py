"""How kinspect writes a number, in every view: the inspector, `explain`, the Markdown
report, the Perfetto trace's labels and the Ranks tab say `22.5 µs`, `×1.49`, `22.4–22.7`
and `3.932` alike, so a figure copied from one reads the same in another.

Each takes None for a figure that is not known and gives an empty string, which is what
a table cell shows for it.

Lies under every core subpackage, beside `errors`.
"""

from __future__ import annotations

US = "µs"


def us(value: float | None) -> str:
    """Microseconds without the unit (a column titled `µs`): one decimal."""
    return "" if value is None else f"{value:.1f}"


def us_text(value: float | None) -> str:
    """Microseconds in running text: `22.5 µs`."""
    return "" if value is None else f"{us(value)} {US}"


def spread(low: float | None, high: float | None) -> str:
    """A range of times, such as p20–p80, in µs without the unit (empty where either end is unknown)."""
    return "" if low is None or high is None else f"{us(low)}–{us(high)}"


def spread_text(low: float | None, high: float | None) -> str:
    """A range of times in running text: `22.4–22.7 µs`."""
    return "" if low is None or high is None else f"{spread(low, high)} {US}"


def ratio(value: float | None) -> str:
    """A time over another (regret, slowdown): `×1.49`."""
    return "" if value is None else f"×{value:.2f}"


def ratio_range(low: float | None, high: float | None) -> str:
    """The least and the most of several ratios (one per compile): `×1.02–×1.09`."""
    return "" if low is None or high is None else f"{ratio(low)}–{ratio(high)}"


def size_factor(low: float, high: float | None = None) -> str:
    """How many times one size is another, whole, or the least and most of several: `×4–×16`
    (sizes apart by powers of two, where a time's two decimals say nothing)."""
    if high is None or round(low) == round(high):
        return f"×{low:.0f}"
    return f"×{low:.0f}–×{high:.0f}"


def share(value: float | None) -> str:
    """A fraction as a whole percentage: `93%`."""
    return "" if value is None else f"{100 * value:.0f}%"


def extra(value: float | None) -> str:
    """Time spent beyond the least possible, as a share of it: `+46%` (`+100%`: twice as long)."""
    return "" if value is None else f"+{100 * value:.0f}%"


def share_range(low: float | None, high: float | None) -> str:
    """The least and the most of several fractions: `0–3%`."""
    return "" if low is None or high is None else f"{100 * low:.0f}–{share(high)}"


def distance(value: float) -> str:
    """A heuristic's distance, always three decimals (ties show as equal text)."""
    return f"{value:.3f}"


def seconds(value: float | None) -> str:
    """A wall-clock span of a command's phase: `12.3 s`."""
    return "" if value is None else f"{value:.1f} s"


def tflops(value: float | None) -> str:
    """A compute rate, whole TFLOP/s: `800 TFLOP/s` (a peak's decimals are noise of its measurement)."""
    return "" if value is None else f"{value:.0f} TFLOP/s"


def gbps(value: float | None) -> str:
    """A memory bandwidth, whole GB/s: `4225 GB/s`."""
    return "" if value is None else f"{value:.0f} GB/s"
