"""Save the inspector's first screen on a sample's recording as an SVG, for the README.

    .venv/bin/python scripts/first_screen.py [samples/linear.py] [-o docs/first-screen.svg]

It opens the model's recording as `kinspect samples/linear.py` does without a GPU, at
120x32 (the size the README's legend describes), and saves the screen as Textual draws it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kinspect.commands.recording import ModelRecording, existing_recording  # noqa: E402
from kinspect.core.store import load  # noqa: E402
from kinspect.tui.app import InspectorApp  # noqa: E402


async def save(model: Path, out: Path, size: tuple[int, int]) -> None:
    found = existing_recording(model)
    if found is None:
        raise SystemExit(f"{model}: no recording beside it")
    source = ModelRecording(model, load(found), found)
    source.check = lambda cancel: None  # the screen the recording opens with, before any check
    app = InspectorApp(source)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.5)
        svg = app.export_screenshot(title=f"kinspect {model}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg, encoding="utf-8")
    print(f"wrote {out} ({size[0]}x{size[1]})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", nargs="?", default="samples/linear.py")
    p.add_argument("-o", "--out", default="docs/first-screen.svg")
    args = p.parse_args()
    asyncio.run(save(Path(args.model), Path(args.out), (120, 32)))


if __name__ == "__main__":
    main()
