"""Pure data and decisions, grouped by feature; nothing here imports torch or textual.

- `dispatch`: the decision itself (shapes, heuristics, symbolic sizes, operands);
- `inductor_code`: Inductor's output code read as text;
- `trace`: a TORCH_TRACE log read into a session of its compiled code;
- `session`: the session model, its timings rule and its file format;
- `quality`: dispatch quality, findings, what-if, comparison and advice;
- `debugger`: breakpoints, conditions, replay, the live pause gate and the cursor over them;
- `inspector`: the inspector's state and the view its tabs draw, without widgets;
- `ranks`: a torchrun job's ranks merged;
- `export`: JSON, Markdown and Perfetto writers;
- `store` (opening and saving files, findings derived afresh) and `source` (the session
  source contract the Inductor layer, the TUI and the commands meet at) sit on top;
  `errors` under everything.

tests/test_import_purity.py proves each subpackage's contract, so every headless command,
the inspector and the tests share one model of Inductor's dispatch.
"""
