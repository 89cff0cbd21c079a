"""Pure data and decisions, grouped by feature; nothing here imports torch or textual.

- `dispatch`: the decision itself (shapes, heuristics, symbolic sizes, operands);
- `session`: the session model, its timings rule and its file format;
- `quality`: dispatch quality, findings, what-if, comparison and advice;
- `debugger`: breakpoints, conditions, replay and the live pause gate;
- `ranks`: a torchrun job's ranks merged;
- `export`: JSON, Markdown and Perfetto writers;
- `store` (opening and saving files, findings derived afresh) and `source` (the session
  source contract the Inductor layer, the TUI and the commands meet at) sit on top;
  `errors` under everything.

tests/test_import_purity.py proves each subpackage's contract, so every headless command,
the inspector and the tests share one model of Inductor's dispatch.
"""
