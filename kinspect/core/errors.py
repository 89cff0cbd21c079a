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
