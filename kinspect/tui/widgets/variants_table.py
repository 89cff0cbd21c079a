"""The variants of one site at the current runtime key: distances, choice, latency, and
the rows it shows, built here from the core's explanation."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from kinspect.core.cut import KERNEL_LEAST, cut_middle
from kinspect.core.dispatch.heuristics import distance_text
from kinspect.core.dispatch.operands import operand_names
from kinspect.core.dispatch.shapes import format_key
from kinspect.core.dispatch.symbolic import TensorSpec
from kinspect.core.quality.explain import SiteExplanation
from kinspect.core.session.runtime import Measurement
from kinspect.core.session.model import Site
from kinspect.tui.text import literal, plain
from kinspect.tui.widgets.columns import aligned_row, column_widths
from kinspect.core import numbers


class VariantsTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Next variant", show=False, id="kinspect.variants.down",
                tooltip="Select the next variant"),
        Binding("k", "cursor_up", "Previous variant", show=False, id="kinspect.variants.up",
                tooltip="Select the previous variant"),
    ]

    class VariantHighlighted(Message):
        def __init__(self, table: VariantsTable, index: int) -> None:
            super().__init__()
            self.table = table
            self.index = index

        @property
        def control(self) -> VariantsTable:
            return self.table

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.generation = 0
        """How many times the rows were rebuilt; benchmarks wait on it."""
        self._layout: tuple[object, bool, bool] | None = None
        self._widths: list[int] = []
        self._shown: tuple[SiteExplanation, float | None, bool, bool] | None = None
        """What `show` last drew, drawn again when the width changes."""
        self._drawn_at = 0
        """The width it was drawn at."""

    def show(self, expl: SiteExplanation, peak_tflops: float | None, show_terms: bool,
             inductor_names: bool = False) -> None:
        """Rebuild the rows and put the cursor on the chosen variant, if there is one.

        Each row is one cell holding the columns already aligned: a DataTable renders
        every cell through Rich (padding, styles, line splitting) again on any change,
        about 75 us a cell, and eleven columns made that 8 ms of each keystroke's frame.
        Column widths only grow while the site stays the same, so the table does not
        jitter as the user types. The app selects the chosen variant itself, so moving
        the cursor here posts no VariantHighlighted: only the user's moves do.
        """
        self._shown = (expl, peak_tflops, show_terms, inductor_names)
        self._drawn_at = self.size.width
        labels = variant_columns(show_terms, peak_tflops is not None)
        rows = variant_rows(expl, peak_tflops, show_terms, inductor_names)
        widths = column_widths(labels, rows)
        room = self._kernel_room(labels, widths)
        if room is not None:  # the kernels' names cut where they differ, not at the screen's edge
            rows = variant_rows(expl, peak_tflops, show_terms, inductor_names, room)
            widths = column_widths(labels, rows)
        layout = (expl.site, show_terms, inductor_names)
        if layout == self._layout:
            widths = [max(w, have) for w, have in zip(widths, self._widths)]
        with self.app.batch_update(), self.prevent(DataTable.RowHighlighted):
            if layout != self._layout or widths != self._widths:
                self.clear(columns=True)
                self.add_column(aligned_row([Text(label) for label in labels], widths),
                                width=sum(widths) + 2 * (len(widths) - 1))
                self._layout, self._widths = layout, widths
            else:
                self.clear()
            for i, row in enumerate(rows):
                self.add_row(aligned_row(row, widths), key=str(i))
            if expl.decision is not None:
                self.move_cursor(row=expl.decision.chosen)
        self.generation += 1

    def on_resize(self) -> None:
        """Its width known, or changed: the kernels' names are cut to fit it (the cursor
        stays on its row)."""
        if self._shown is None or self.size.width == self._drawn_at:
            return
        row = self.cursor_row
        self._layout = None
        self.show(*self._shown)
        with self.prevent(DataTable.RowHighlighted):
            self.move_cursor(row=row)

    def _kernel_room(self, labels: list[str], widths: list[int]) -> int | None:
        """How wide the kernel column may be to end on screen, where its names are wider:
        the table's visible width less its cell's padding and the columns before it."""
        width = self.scrollable_content_region.width or self.app.size.width
        k = labels.index("kernel")
        room = width - 2 * self.cell_padding - sum(widths[:k]) - 2 * k
        return max(room, KERNEL_LEAST) if widths[k] > room else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.VariantHighlighted(self, event.cursor_row))


CHOSEN = "▶"


TIED = "="


MISMATCH = "!"


ESTIMATE = "~"
"""Marks a figure that was estimated, not measured (`kinspect.core.quality.estimate`)."""


def variant_columns(show_terms: bool, peak: bool = True) -> list[str]:
    """`peak`: a share of the GPU's peak can be given (a column always empty says nothing)."""
    cols = ["", "v", "hint", "distance"]
    if show_terms:
        cols.append("terms (tensor[dim] distance)")
    return cols + ["median µs", "p20–p80", "vs fastest"] + (["peak"] if peak else []) + ["kernel", "same as", "key"]


def identical_to(site: Site) -> dict[int, int]:
    """Each variant that runs an earlier one's kernel (same source and config), mapped to it."""
    return {i: k for i, k in enumerate(site.kernels) if k != i}


def tensor_names(site: Site, specs: Sequence[TensorSpec], inductor_names: bool) -> list[str]:
    """The user's name for each tensor (`x`, `weight`, `out`), or Inductor's on demand."""
    return [t.name for t in specs] if inductor_names else operand_names(site.op, specs)


def term_labels(site: Site, inductor_names: bool = False) -> list[list[str]]:
    specs = site.runtime_specs
    names = tensor_names(site, specs, inductor_names)
    return [[f"{literal(n)}[{d}]" for d in range(len(t.sizes))] for n, t in zip(names, specs)]


def _terms_text(terms: tuple[tuple[float, ...], ...], labels: list[list[str]]) -> Text:
    parts = []
    for ti, tensor in enumerate(terms):
        for di, term in enumerate(tensor):
            if term:
                name = labels[ti][di] if ti < len(labels) and di < len(labels[ti]) else f"t{ti}[{di}]"
                parts.append(f"{name} {numbers.distance(term)}")
    return Text(" ".join(parts) if parts else "all 0", style="" if parts else "dim")


def _spread(m: Measurement) -> str:
    if m.p20_us is None or m.p80_us is None:
        return ""
    return numbers.spread(m.p20_us, m.p80_us)


def variant_rows(
    expl: SiteExplanation, peak_tflops: float | None, show_terms: bool, inductor_names: bool = False,
    kernel_width: int | None = None,
) -> list[list[Text]]:
    """One row per variant, cells in `variant_columns` order; kernel names cut in the middle
    to `kernel_width`, where given (their ends tell a site's kernels apart).

    Without a decision (the shape does not apply to this site) the rows still show each
    variant's hint, kernel and key, with the decision columns empty.
    """
    d = expl.decision
    site = expl.site
    measured = expl.measured or {}
    same = identical_to(site)
    labels = term_labels(site, inductor_names) if show_terms else []
    rows = []
    for v in site.variants:
        s = d.scores[v.index] if d is not None else None
        chosen = d is not None and v.index == d.chosen
        mark = CHOSEN if chosen else (TIED if d is not None and v.index in d.tied else "")
        if s is not None and s.mismatch:
            mark += MISMATCH
        if s is None:
            distance = Text("")
        elif v.key is None:
            distance = Text("no key", style="yellow")
        else:
            distance = Text(distance_text(s.distance, d.heuristic), style="yellow" if s.mismatch else "")
        row = [
            Text(mark, style="bold" if chosen else ""),
            Text(f"v{v.index}", style="bold" if chosen else ""),
            Text("—" if v.hint is None else str(v.hint)),
            distance,
        ]
        if show_terms:
            row.append(_terms_text(s.terms, labels) if s is not None else Text(""))
        m = measured.get(v.index)
        est = expl.estimate.median(v.index) if expl.estimate is not None and m is None else None
        if est is not None:
            assert expl.estimate is not None
            row += [Text(ESTIMATE + numbers.us(est), style="cyan"), Text(""),
                    Text(ESTIMATE + numbers.ratio(expl.estimate.regret(v.index)), style="cyan")]
            row += [Text("")] if peak_tflops is not None else []
        else:
            ratio = expl.timings.regret(v.index) if expl.timings is not None else None
            cells = _measure_cells(m, ratio, expl.timings is not None and expl.timings.is_fastest(v.index),
                                   peak_tflops)
            row += cells if peak_tflops is not None else cells[:-1]
        row += [
            plain(v.kernel_name if kernel_width is None else cut_middle(v.kernel_name, kernel_width)),
            Text(f"= v{same[v.index]}" if v.index in same else "", style="magenta"),
            Text("none" if v.key is None else format_key(v.key), style="dim"),
        ]
        rows.append(row)
    return rows


def _measure_cells(m: Measurement | None, ratio: float | None, fastest: bool, peak: float | None) -> list[Text]:
    """`ratio`: the variant's median over the fastest's (`KeyTimings.regret`)."""
    if m is None:
        return [Text(""), Text(""), Text(""), Text("")]
    if m.error is not None or m.median_us is None:
        return [Text("failed", style="red"), Text(""), Text(""), Text("")]
    if fastest:
        rel = Text("fastest", style="green")
    elif ratio is not None:
        rel = Text(numbers.ratio(ratio))
    else:
        rel = Text("")
    share = Text(numbers.share(m.tflops / peak)) if m.tflops is not None and peak else Text("")
    return [Text(numbers.us(m.median_us)), Text(_spread(m), style="dim"), rel, share]
