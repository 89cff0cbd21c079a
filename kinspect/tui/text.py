"""Text from outside kinspect (a session file, a model's exception, the user's code) made
safe to draw: control characters, escape sequences among them, bidi overrides and
zero-width characters shown as visible `\\x1b`/`\\u202e` text (`kinspect.core.errors.shown`,
the one escaping rule every output uses), never sent to the terminal. Rich `Text` is never
parsed as markup, so brackets in such text stay as they are."""

from __future__ import annotations

from rich.text import Text

from kinspect.core.errors import KinspectError, shown


def literal(text: str) -> str:
    """Control and invisible format characters as visible `\\x1b`-style text; newlines kept."""
    return shown(text, lines=True)


def plain(text: str, style: str = "") -> Text:
    return Text(literal(text), style=style)


def error_text(what: str, err: BaseException | None) -> str:
    """A failure in one line: kinspect's own errors say it all, others get their type."""
    if isinstance(err, KinspectError):
        return str(err)
    return f"{what}: {type(err).__name__}: {err}"
