"""`kinspect plot S.json -o map.png`: every site's decision map as an image (PNG or SVG)."""

from __future__ import annotations

from kinspect.commands.terminal import say
from kinspect.core.store import load


def run(session_path: str, out: str, site: str | None = None) -> int:
    from kinspect.images import draw

    n = draw(load(session_path), out, site)
    say(f"wrote {out} ({n} map{'s' if n != 1 else ''})")
    return 0
