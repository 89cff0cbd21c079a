"""Small modal prompts: jump to an event, force a variant, go to a measured key, export
the session.

Each keeps its error on its own last line, in one line, and stays open until the input
is good or the user presses escape, so a typo never costs the user what they typed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, RadioButton, RadioSet, Static
from textual.worker import Worker, WorkerState

from kinspect.core.dispatch.shapes import FullKey, Key, ParsedShape, SymbolShape, format_key, sizes_text
from kinspect.core.errors import KinspectError
from kinspect.core.session.model import Session, Site
from kinspect.core.session.timings import KeyTimings
from kinspect.tui.text import literal
from kinspect.core import numbers

CANCEL = Binding("escape", "dismiss(None)", "Cancel", id="kinspect.dialog.cancel",
                 tooltip="Close this prompt without doing anything")


class JumpScreen(ModalScreen[int | None]):
    """`g`: type an event number (its seq), enter jumps there."""

    BINDINGS = [CANCEL]

    def __init__(self, check: Callable[[int], str | None], total: int) -> None:
        super().__init__()
        self._check = check
        self._total = total

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(f"go to event (0–{max(self._total - 1, 0)}), enter jumps", style="bold"))
            yield Input(type="integer", placeholder="event number", id="jump-input")
            yield Static(Text("escape: cancel", style="dim"), classes="status")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            seq = int(event.value)
        except ValueError:
            self._fail("type an event number")
            return
        error = self._check(seq)
        if error is not None:
            self._fail(error)
        else:
            self.dismiss(seq)

    def _fail(self, message: str) -> None:
        self.query_one(".status", Static).update(Text("✗ " + literal(message), style="bold red"))


class OverrideScreen(ModalScreen[int | None]):
    """`o`: the variant number the paused dispatch runs instead.

    A digit that no longer number can start (always, below ten variants) chooses at once;
    with ten or more, `1` waits for a second digit or enter."""

    BINDINGS = [CANCEL]

    def __init__(self, site: str, labels: list[str]) -> None:
        super().__init__()
        self._site = site
        self._labels = labels
        self._typed = ""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            title = Text("force a variant for this call of ", style="bold")
            title.append(literal(self._site))
            yield Static(title)
            yield Static(Text("type its number: " + ", ".join(literal(x) for x in self._labels)))
            yield Static(Text("escape: cancel (Inductor's pick runs)", style="dim"), classes="status")

    def on_key(self, event: events.Key) -> None:
        n = len(self._labels)
        if event.key == "enter" and self._typed:
            event.stop()
            self.dismiss(int(self._typed))
        elif event.key == "backspace" and self._typed:
            event.stop()
            self._typed = self._typed[:-1]
            self._say(Text(f"v{self._typed}…" if self._typed else "", style="bold"))
        elif event.character is not None and event.character.isdigit():
            event.stop()
            v = int(self._typed + event.character)
            if v >= n:
                self._typed = ""
                self._say(Text(f"✗ no variant {v}: this site has v0–v{n - 1}", style="bold red"))
            elif v == 0 or v * 10 >= n:
                self.dismiss(v)
            else:
                self._typed = str(v)
                self._say(Text(f"v{v}… another digit, or enter for v{v}", style="bold"))

    def _say(self, text: Text) -> None:
        self.query_one(".status", Static).update(text)


MeasuredShape = tuple[ParsedShape, str, Text]
"""A measured key as the shape to show, the text the entry then holds, and its line."""


class MeasuredScreen(ModalScreen[tuple[ParsedShape, str] | None]):
    """`l`: the keys where the site was measured; enter makes the chosen one the shape,
    given as the shape itself (the entry shows its text, and parses nothing)."""

    BINDINGS = [CANCEL]

    def __init__(self, site: str, shapes: list[MeasuredShape]) -> None:
        super().__init__()
        self._site = site
        self._shapes = shapes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="measured"):
            title = Text(f"measured keys of {literal(self._site)} ({len(self._shapes)}, one compile)", style="bold")
            yield Static(title)
            yield OptionList(*(line for _, _, line in self._shapes), id="measured-list")
            yield Static(Text("enter: show this shape · escape: cancel", style="dim"), classes="status")

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        shape, text, _ = self._shapes[event.option_index]
        self.dismiss((shape, text))


FORMAT_TITLES = {"json": "JSON session (kinspect open)", "md": "Markdown report", "perfetto": "Perfetto trace"}


def export_stem(path: str | None) -> str:
    """The name exports start from: the model's or recording's file (`linear` for
    `samples/linear.session.json` or `samples/linear.py`)."""
    if not path:
        return "session"
    name = Path(path).name
    for suffix in (".session.json", ".json", ".py"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def default_export_path(stem: str, fmt: str) -> str:
    return {"json": f"{stem}.export.session.json", "md": f"{stem}.md", "perfetto": f"{stem}.perfetto.json"}[fmt]


class FormatButton(RadioButton):
    """A format choice whose mark says whether it is chosen (● or ○), not its colour
    alone, which NO_COLOR takes away."""

    @property  # type: ignore[override]
    def BUTTON_INNER(self) -> str:  # noqa: N802 (textual's name for the mark)
        return "●" if self.value else "○"


class ExportScreen(ModalScreen[tuple[str, str, str] | None]):
    """`e`: choose a format (↑/↓), edit the path, enter writes it (in a thread: a trace
    takes a second); a file already there is replaced only on a second enter."""

    BINDINGS = [
        CANCEL,
        Binding("up", "format(-1)", "Previous format", show=False, id="kinspect.export.up",
                tooltip="Choose the format above"),
        Binding("down", "format(1)", "Next format", show=False, id="kinspect.export.down",
                tooltip="Choose the format below"),
    ]

    def __init__(self, session: Session, stem: str, fmt: str = "json", keep: Sequence[str] = ()) -> None:
        from kinspect.core.export import FORMATS  # the exporters: imported when asked for, not for the first screen

        super().__init__()
        self._formats = FORMATS
        self._session = session
        self._keep = keep
        """Files the export may not replace: the recording shown, the model."""
        self._stem = stem
        self._fmt = fmt
        self._edited = False
        self._confirmed: tuple[str, str] | None = None
        """The format and path the user agreed to overwrite."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(f"export this session ({len(self._session.events)} events)", style="bold"))
            with RadioSet(id="export-format"):
                for fmt in self._formats:
                    yield FormatButton(FORMAT_TITLES[fmt], value=fmt == self._fmt, name=fmt)
            yield Input(default_export_path(self._stem, self._fmt), id="export-path")
            yield Static(Text("↑/↓ format · enter writes the file · escape: cancel", style="dim"), classes="status")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    def action_format(self, step: int) -> None:
        """The format changes here, before the radio set reports it: a second key pressed
        before that report moves on from this one."""
        i = (self._formats.index(self._fmt) + step) % len(self._formats)
        self._fmt = self._formats[i]
        for button in self.query(FormatButton):
            if button.name == self._fmt:
                button.value = True

    @on(RadioSet.Changed)
    def _format_changed(self, event: RadioSet.Changed) -> None:
        self._fmt = event.pressed.name or "json"
        if not self._edited:
            self.query_one("#export-path", Input).value = default_export_path(self._stem, self._fmt)

    @on(Input.Changed)
    def _path_edited(self, event: Input.Changed) -> None:
        self._edited = event.value != default_export_path(self._stem, self._fmt)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        path = event.value.strip()
        if not path:
            self._say(Text("✗ type a file name", style="bold red"))
            return
        target = Path(path).expanduser()
        if os.path.lexists(target) and not target.is_dir() and self._confirmed != (self._fmt, path):
            self._confirmed = (self._fmt, path)
            self._say(Text(f"✗ {literal(path)} exists: enter again replaces it, or edit the name", style="bold red"))
            return
        self._say(Text(f"writing {literal(path)}…", style="yellow"))
        self._write(self._fmt, path)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _write(self, fmt: str, path: str) -> tuple[str, str, str]:
        """The report `kinspect export` writes, images beside it; the third part says what
        was written beside it, or why an image was not."""
        from kinspect.report_files import write

        written = write(self._session, fmt, Path(path).expanduser(), keep=self._keep)
        beside = [f"with {name}" for name in (*written.images, *([written.chart] if written.chart else []))]
        return fmt, path, "; ".join(beside + written.notes)

    @on(Worker.StateChanged)
    def _written(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "export":
            return
        if event.state == WorkerState.SUCCESS:
            self.dismiss(event.worker.result)
        elif event.state == WorkerState.ERROR:
            err = event.worker.error
            text = str(err) if isinstance(err, KinspectError) else f"{type(err).__name__}: {err}"
            self._say(Text("✗ " + literal(text.splitlines()[0] if text else "export failed"), style="bold red"))

    def _say(self, text: Text) -> None:
        self.query_one(".status", Static).update(text)


def measured_shapes(session: Session, site: Site, timings: Mapping[tuple[str, Key], KeyTimings]
                    ) -> list[MeasuredShape]:
    """Each key where `site` was measured, in size order: the shape to type there (the
    user's sizes when the key tells them all, else the whole key) and a line saying
    which variant is fastest and what Inductor's pick costs (one compile's figures)."""
    keys = sorted(k for name, k in timings if name == site.name)
    out = []
    for key in keys:
        t = timings[(site.name, key)]
        values = site.symbol_values(key)
        shape: ParsedShape
        if site.symbols <= values.keys():
            sizes = {session.label_of(n): v for n, v in sorted(values.items())}
            shape, text = SymbolShape(sizes), sizes_text(sizes)
        else:
            shape, text = FullKey(key), format_key(key)
        line = Text(literal(text), style="bold")
        if t.fastest is None:
            line.append("  no variant timed", style="dim")
        else:
            picked = site.decide(key).chosen
            fastest = " = ".join(f"v{i}" for i in site.kernel_members(t.fastest))
            line.append(f"  fastest {fastest} · Inductor picks v{picked}")
            regret = t.regret(picked)
            if t.is_fastest(picked):
                line.append(" (the fastest)", style="green")
            elif regret is not None:
                line.append(" " + numbers.ratio(regret), style="red" if t.slower(picked) else "yellow")
        out.append((shape, text, line))
    return out


class RenameScreen(ModalScreen[str | None]):
    """The palette's "Rename size": the user's name for one size, shown wherever a size is;
    the app renames (`kinspect.core.session.size_names`) and says why where it cannot."""

    BINDINGS = [CANCEL]

    def __init__(self, label: str, inductor: str, rename: Callable[[str], str | None]) -> None:
        super().__init__()
        self._label = label
        self._inductor = inductor
        self._rename = rename

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(f"rename {literal(self._label)} (Inductor's {literal(self._inductor)}), enter renames",
                              style="bold"))
            yield Input(placeholder="a name: letters, digits and _", id="rename-input")
            yield Static(Text("escape: cancel", style="dim"), classes="status")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        error = self._rename(name)
        if error is not None:
            self.query_one(".status", Static).update(Text("✗ " + literal(error), style="bold red"))
        else:
            self.dismiss(name)
