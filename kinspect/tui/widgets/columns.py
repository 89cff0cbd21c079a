"""Table cells laid out ahead of the table: the inspector's tables never wait to measure."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text


def column_widths(labels: Sequence[str], rows: Sequence[Sequence[Text]]) -> list[int]:
    """Each column's width: its widest cell or label."""
    widths = [cell_len(label) for label in labels]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], cell.cell_len)
    return widths


def aligned_row(cells: Sequence[Text], widths: Sequence[int]) -> Text:
    """Cells padded to their column widths in one line, two spaces apart: what a
    DataTable with those columns draws, as one cell (see VariantsTable for why). The
    padding carries no style, as a DataTable's does not."""
    out = Text()
    for i, (cell, width) in enumerate(zip(cells, widths)):
        out.append_text(cell)
        pad = width - cell.cell_len + (2 if i < len(widths) - 1 else 0)
        if pad > 0:
            out.append(" " * pad)
    return out
