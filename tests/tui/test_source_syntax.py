"""A variant's source is lexed once: shown again, it is drawn from the kept highlighting,
exactly as Rich's own Syntax draws it."""

from __future__ import annotations

from rich.console import Console
from rich.syntax import Syntax

from kinspect.tui.widgets import source_syntax
from kinspect.tui.widgets.source_syntax import python_source

CODE = "@triton.jit\ndef kernel(x_ptr, n, XBLOCK: tl.constexpr):\n    x = tl.load(x_ptr + tl.arange(0, XBLOCK))  # a very long line " + "x" * 90 + "\n"


def _drawn(renderable: object, width: int = 60) -> list[str]:
    console = Console(width=width, color_system="truecolor", force_terminal=True, legacy_windows=False)
    with console.capture() as out:
        console.print(renderable)
    return out.get().splitlines()


def test_kept_highlighting_draws_as_syntax_does_and_lexes_once(monkeypatch):
    for wrap in (False, True):
        plain = Syntax(CODE, "python", theme="ansi_dark", line_numbers=True, word_wrap=wrap)
        assert _drawn(python_source(CODE, wrap)) == _drawn(plain)

    lexed: list[str] = []
    highlight = Syntax.highlight

    def counted(self: Syntax, code: str, line_range: object = None) -> object:
        lexed.append(code)
        return highlight(self, code, line_range)

    monkeypatch.setattr(Syntax, "highlight", counted)
    monkeypatch.setattr(source_syntax, "_kept", type(source_syntax._kept)())
    first = _drawn(python_source(CODE, False))
    assert _drawn(python_source(CODE, False)) == first
    assert _drawn(python_source(CODE, False), width=40) != first  # another width, the same lexing
    assert len(lexed) == 1
