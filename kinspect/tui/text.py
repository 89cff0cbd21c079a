"""Session text on screen: Rich `Text` built from session data, never markup.

Session strings come from files anyone can write, so they only ever enter a `Text` as
plain text, after `literal` has made control characters visible: a kernel named
`[bold]x[/bold]` or a source holding an escape sequence shows exactly those characters
and cannot restyle or drive the terminal. Every module that puts session text on screen
goes through here.
"""

from __future__ import annotations

import re

from rich.text import Text

from kinspect.core.errors import KinspectError

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def literal(text: str) -> str:
    """Control characters (escape sequences included) as visible `\\x1b`-style text."""
    return _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], text)


def plain(text: str, style: str = "") -> Text:
    return Text(literal(text), style=style)


def error_text(what: str, err: BaseException | None) -> str:
    """A failure in one line: kinspect's own errors say it all, others get their type."""
    if isinstance(err, KinspectError):
        return str(err)
    return f"{what}: {type(err).__name__}: {err}"
