"""Text from outside kinspect (a session file, a model's exception, the user's code) made
safe to draw: control characters, escape sequences among them, shown as visible `\\x1b`
text, never sent to the terminal. Rich `Text` is never parsed as markup, so brackets in
such text stay as they are."""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def literal(text: str) -> str:
    """Control characters (escape sequences included) as visible `\\x1b`-style text."""
    return _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], text)


def plain(text: str, style: str = "") -> Text:
    return Text(literal(text), style=style)
