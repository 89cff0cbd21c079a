"""Putting session text into Markdown as data, never as markup.

Names, messages and config values in a session come from anywhere; in a report they
must render as the characters they are: a `|` must not split a table cell, a newline
must not end a row, `<script>` must not become HTML, `**` must not become bold, `$x$`
must not become math, and a bidi override (U+202E) must not make text read as other
text (it is written as its escape, as on a terminal: `kinspect.core.errors.shown`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import quote as _url_quote

from kinspect.core.errors import shown

_BREAKS = re.compile(r"[\r\n\t\x0b\x0c\x85\u2028\u2029]+")
_PROSE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")


def flat(text: str) -> str:
    """One line: every line break or tab becomes a single space, and every other hidden
    character its escape."""
    return shown(_BREAKS.sub(" ", text))


def prose(text: str) -> str:
    """Text that renders literally: Markdown's active characters backslash-escaped."""
    return _PROSE_SPECIAL.sub(r"\\\1", flat(text))


def code(text: str, in_table: bool = True) -> str:
    """A code span holding `text` exactly, whatever backticks it contains.

    In a table cell `|` is escaped even inside the span: GFM splits cells before it
    parses spans, and renders `\\|` in a span as `|`.
    """
    text = flat(text)
    if not text:
        return ""
    if in_table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Lines of a GFM table; cells must already be escaped with `prose` or `code`. A column
    that is empty in every row is left out: a reader would look down it for nothing."""
    rows = [list(row) for row in rows]
    shown = [i for i in range(len(header)) if not rows or any(row[i] for row in rows)]
    out = ["| " + " | ".join(header[i] for i in shown) + " |", "|" + "|".join(" --- " for _ in shown) + "|"]
    out += ["| " + " | ".join(row[i] for i in shown) + " |" for row in rows]
    return out


def quote(target: str) -> str:
    """A link target (an image beside the report) percent-encoded, so spaces or brackets
    in a file name cannot end the link or start markup."""
    return _url_quote(target)
