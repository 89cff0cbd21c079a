"""Errors a user can act on.

Every failure kinspect reports to a user is one of these: the CLI prints `str(err)` on
one line after `kinspect: error:` and exits 2, the inspector shows it inline. Anything
else escaping is a bug and keeps its traceback.
"""


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
