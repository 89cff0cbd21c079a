"""Each template tensor's size expressions against each hint's key and the runtime size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from kinspect.core.dispatch.shapes import Key
from kinspect.core.dispatch.symbolic import SizeOverflow, TensorSpec
from kinspect.core.errors import ShapeError
from kinspect.core.session.model import Site
from kinspect.tui.text import plain
from kinspect.tui.widgets.columns import column_widths
from kinspect.tui.widgets.variants_table import tensor_names


class SymbolicTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="kinspect.symbolic.down",
                tooltip="Move to the next dimension"),
        Binding("k", "cursor_up", "Up", show=False, id="kinspect.symbolic.up",
                tooltip="Move to the previous dimension"),
    ]

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def show(self, site: Site, env: Mapping[str, int] | None, key: Key | None,
             aliases: Mapping[str, str] | None, tuned: Mapping[int, Mapping[str, int]] | None = None) -> None:
        """`aliases`: the user's names for Inductor's symbols; None shows Inductor's names.
        `tuned`: each hint's one size per symbol, where the session records them."""
        labels = symbolic_columns(site)
        rows = symbolic_rows(site, env, key, aliases, tuned)
        with self.app.batch_update():
            self.clear(columns=True)
            for label, width in zip(labels, column_widths(labels, rows)):
                self.add_column(Text(label), width=width)
            self.add_rows(rows)


SYMBOLIC_LEGEND = (
    "runtime is the size at the typed shape. Each hint column holds the size Inductor put in that variant's key (and tuned "
    "for); (true N) marks where the size expression is really N at that hint. "
    "i: Inductor's names (s33, arg3_1) or yours (B, x)."
)


def symbolic_columns(site: Site) -> list[str]:
    """The size at the typed shape sits beside its expression: the hint columns after it
    can run past a narrow pane (GPT-2's `4096 (true 16777216)`) and scroll, it cannot."""
    return ["tensor", "dim", "size", "runtime"] + [f"v{v.index} @{v.hint}" for v in site.variants if v.hint is not None]


def symbolic_rows(site: Site, env: Mapping[str, int] | None, key: Key | None,
                  aliases: Mapping[str, str] | None = None,
                  tuned: Mapping[int, Mapping[str, int]] | None = None) -> list[list[Text]]:
    """Per tensor dim: the expression, its size now, and the key value and true value at
    each hint.

    A hint cell reads `64` when the key holds the expression's true value and
    `64 (true 128)` when Inductor keyed (and benchmarked) a size the expression never
    takes at that hint. With `aliases` (Inductor's symbol names to the user's) sizes and
    tensors read by the user's names; without, by Inductor's.
    """
    names = tensor_names(site, site.tensors, aliases is None)
    rows = []
    hinted = [v for v in site.variants if v.hint is not None]
    use_key = key is not None and site.runtime_tensors is None and len(key) == len(site.tensors)
    # A variant keyed per symbol (an Inductor that evaluates a hint so, in a session that
    # does not record its sizes) holds the sizes its kernel computed: shown as keyed.
    per_symbol = [v.hint not in (tuned or {}) and not site.keyed_by_hint(v) and v.key is not None
                  and tuple(map(len, v.key)) == tuple(len(t.sizes) for t in site.tensors) for v in hinted]
    for ti, t in enumerate(site.tensors):
        at = [t.at_hint(v.hint, (tuned or {}).get(v.hint)) for v in hinted]  # type: ignore[arg-type]
        for di, expr in enumerate(t.sizes):
            text = expr.text if aliases is None else expr.text_with(aliases)
            row = [plain(names[ti]) if di == 0 else Text(""), Text(str(di)), plain(text),
                   _runtime_cell(t, di, env, key[ti] if use_key else None)]
            for v, dims, keyed in zip(hinted, at, per_symbol):
                dim = dims[di]
                if keyed:
                    row.append(Text(str(v.key[ti][di]), style="dim" if expr.is_constant else ""))  # type: ignore[index]
                elif dim.differs:
                    row.append(Text(f"{dim.key_value} (true {dim.true_text})", style="bold red"))
                else:
                    row.append(Text(str(dim.key_value), style="dim" if expr.is_constant else ""))
            rows.append(row)
    return rows


def _runtime_cell(t: TensorSpec, di: int, env: Mapping[str, int] | None, shape: Sequence[int] | None) -> Text:
    if shape is not None:
        return Text(str(shape[di]) if di < len(shape) else "?")
    if env is None:
        return Text("?", style="dim")
    try:
        return Text(str(t.sizes[di].evaluate(env)), style="bold")
    except SizeOverflow:
        return Text("> 2**62", style="bold red")
    except ShapeError:
        return Text("?", style="dim")
