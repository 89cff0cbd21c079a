"""Rewrite session files into the layout kinspect writes now: events that are a list of
objects (the first layout of format version 1, before it was released) become a key
table and event columns, and measurements that are a list of objects (version 1) become
measurement columns (version 2).

The old events become a key table and event columns as plain JSON, the result is read
back through `session_from_json` with every check (which reads version 1's measurement
objects), and written by `save`, so the file is exactly what kinspect writes, recorded
facts unchanged. Nothing is done to a file that fails to load.

Usage: python scripts/migrate_sessions.py FILE...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.store import save
from kinspect.core.session.format.document import session_from_json
from kinspect.core.session.format.events import EVENT_COLUMNS


def columnar(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with row-object events turned into `keys` and event columns."""
    if not isinstance(doc, dict) or not isinstance(doc.get("events"), list):
        return doc
    rows = doc["events"]
    sites = {s.get("name"): i for i, s in enumerate(doc.get("sites", [])) if isinstance(s, dict)}
    keys: dict[str, int] = {}
    columns: dict[str, list[Any]] = {name: [] for name in EVENT_COLUMNS}
    for i, e in enumerate(rows):
        if not isinstance(e, dict) or e.get("site") not in sites:
            raise KinspectError(f"events[{i}]: not an event of a site in this file")
        text = json.dumps(e.get("key"), separators=(",", ":"))
        for name in EVENT_COLUMNS:
            if name == "site":
                columns[name].append(sites[e["site"]])
            elif name == "key":
                columns[name].append(keys.setdefault(text, len(keys)))
            else:
                columns[name].append(e.get(name))
    out = {k: v for k, v in doc.items() if k != "events"}
    out["keys"] = [json.loads(k) for k in keys]
    out["events"] = columns
    return out


def main(paths: list[str]) -> int:
    failed = 0
    for name in paths:
        path = Path(name)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            was = [part for part in ("events", "measurements") if isinstance(doc, dict) and isinstance(doc.get(part), list)
                   and (part == "events" or doc[part])]
            session = session_from_json(columnar(doc))
        except (OSError, ValueError, KinspectError) as e:
            print(f"{path}: not migrated: {e}", file=sys.stderr)
            failed += 1
            continue
        save(session, path)
        what = f"{' and '.join(was)} turned into columns" if was else "already columnar, re-saved"
        print(f"{path}: {what} ({len(session.events)} events, {len(session.measurements)} measurements)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
