"""Errors a user can act on.

Every failure kinspect reports to a user is one of these: the CLI prints `str(err)` on
one line after `kinspect: error:` and exits 2, the inspector shows it inline. Anything
else escaping is a bug and keeps its traceback.
"""

import re


class KinspectError(Exception):
    """A problem with the user's input, file or environment, stated in one line."""


class ShapeError(KinspectError, ValueError):
    """A runtime shape that does not parse or is not a valid size."""


class SessionError(KinspectError):
    """A session file that cannot be read, is not kinspect's, or breaks the format."""


ECHO_LIMIT = 60


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """A value from a file or a command line, as an error message quotes it: its repr, cut
    to `limit` characters with its full length said, so that a 50 MB string or a
    4,000-digit number in a hostile file makes a one-line error, not a 50 MB one."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        return f"an integer of {value.bit_length():,} bits"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


_FORMAT_CHARACTERS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
"""Unicode's format characters and line separators: they change what the text around
them looks like without showing themselves (the bidi override U+202E makes `exe.txt`
read as `txt.exe`; zero-width spaces and joiners make two names look alike).
tests/test_hostile_files.py checks the list against `unicodedata`."""
_HIDDEN = re.compile(f"[\x00-\x1f\x7f-\x9f{_FORMAT_CHARACTERS}]")
"""C0, DEL, C1 (ESC and CSI, U+009B, start terminal escape sequences) and the above."""
_HIDDEN_IN_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT_CHARACTERS}]")


def _visible(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def shown(text: str, lines: bool = False) -> str:
    """Text from outside kinspect (a file name, a path the user typed, a session's
    strings, a model's exception) as it may reach a terminal, every hidden character
    written as its escape (`\\x1b`, `\\u202e`): nothing in it can set the window title,
    write the clipboard or make text read as other text. `lines` keeps tab and newline,
    for text shown as lines (a kernel's source). The one function every path from
    outside to a terminal goes through."""
    return (_HIDDEN_IN_LINES if lines else _HIDDEN).sub(_visible, text)


def error_line(e: BaseException) -> str:
    """An exception as one line: its type and the first line of its text (a CUDA error or
    a model's exception holds many), cut to 300 characters."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:300] if lines else ''}"
