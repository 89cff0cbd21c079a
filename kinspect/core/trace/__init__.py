"""TORCH_TRACE logs read as text: the structured trace torch writes (`TORCH_TRACE=/dir`,
one file per rank) and tlparse reads, turned into a session with no dispatch events and
no measurements.

- `framing`: the log's entries (a glog-style prefix and JSON metadata, the payload on
  tab-indented lines), streamed, each payload checked against its digest;
- `log`: one process's compiles kept apart by compile id, with their symbols, Dynamo
  graph inputs, Inductor output code and settings;
- `graphs`: one graph's output code read into the session's graph and sites;
- `sessions`: a log (or a saved output-code module) as a session; `files`: the files a
  path names (a log, a `.gz` of one, a folder of per-rank logs); `stated`: what such a
  session says of its log.

Nothing from a trace is executed: output code is parsed as text (`ast`), never imported.
May import `kinspect.core.dispatch`, `kinspect.core.inductor_code` and `kinspect.core.session`.
"""
