"""A session on disk: a versioned JSON file, and the JSON-lines log a live recording appends to.

A session file is data from anywhere (a colleague, a bug report), so reading one only
ever runs `json.loads` and type checks: no pickle, no eval, no sympify.

One module per job: `checks` (every field's type and size), `read` (a file's sections into
the session model), `write` (the model into JSON) and `log` (the recording log, its writer
and its reader together, so the two cannot drift apart). `kinspect.core.store` opens and
saves files with them. The field checks (`checks.a_string`, `an_int`, `a_key`, ...) are
public: the reader, the log's reader and anything else that reads a session's JSON share
them, so a field is checked one way wherever it is read.
"""
