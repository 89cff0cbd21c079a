"""Generated source highlighted once per text, not once per frame.

Rich's `Syntax` lexes its code with pygments every time it is rendered: each new variant
in the source preview, each wrap toggle, each time the Source tab and the preview show
the same kernel again. A kernel of a few hundred lines takes pygments 10-20 ms, which
made the keystrokes that change the chosen variant the slowest ones on a busy machine.
"""

from __future__ import annotations

from collections import OrderedDict

from rich.syntax import Syntax
from rich.text import Text

KEPT = 32
"""Highlighted texts kept: more variants than a session's sites have between them."""
THEME = Syntax.get_theme("ansi_dark")
"""One theme for every view, so that a text highlighted for one is found for the next
(Rich makes a new theme object per Syntax given the theme by name)."""

_kept: OrderedDict[tuple[object, ...], Text] = OrderedDict()


def python_source(code: str, wrap: bool) -> Syntax:
    """Numbered lines, kept whole (the view scrolls sideways) unless `wrap`."""
    return KeptSyntax(code, "python", theme=THEME, line_numbers=True, word_wrap=wrap)


class KeptSyntax(Syntax):
    def highlight(self, code: str, line_range: tuple[int | None, int | None] | None = None) -> Text:
        """A copy of the text highlighted last time for the same code, lexer, theme and
        wrapping (Syntax styles the text it gets further when it renders)."""
        key = (code, line_range, self._lexer, self._theme, self.word_wrap, self.tab_size)
        text = _kept.get(key)
        if text is None:
            text = _kept[key] = super().highlight(code, line_range)
            if len(_kept) > KEPT:
                _kept.popitem(last=False)
        else:
            _kept.move_to_end(key)
        return text.copy()
