"""A session on disk: a versioned JSON file, and the JSON-lines log a live recording appends to.

A session file is data from anywhere (a colleague, a bug report), so reading one only
ever runs `json.loads` and type checks: no pickle, no eval, no sympify.

A module per record family, each record's JSON form (`x_to_json`) beside its reading
(`x_from_json`), so a field added to one direction is in sight of the other: `header`
(environment and model), `compiled` (symbols, graphs, sites, variants, call sites),
`results` (measurements, baselines, sweeps, recompiles, findings) and `events` (the key
table and event columns). `document` puts them together into a session file and its text,
`log` is the recording log (its writer and reader together), and `checks` holds every
field's type and size check, public so that a field is checked one way wherever it is
read. `kinspect.core.store` opens and saves files with them.
"""
