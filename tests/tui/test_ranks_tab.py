"""The Ranks tab of a torchrun job's sessions opened together, and its absence otherwise."""

from __future__ import annotations

from pathlib import Path

from ranks_sessions import TIMES, rank_session
from tui_helpers import screen_text, toasts, wait_until

from kinspect.core.ranks.merged import merge
from kinspect.core.source import RecordedSource
from kinspect.core.store import load
from kinspect.tui.app import InspectorApp


def merged_app() -> InspectorApp:
    merged = merge([rank_session(0, [100, 1000], TIMES), rank_session(1, [1000, 100], TIMES, config={2: {"BLOCK_M": 32}})],
                   ["job/model.rank0.session.json", "job/model.rank1.session.json"])
    return InspectorApp(RecordedSource(merged.lead(), merged.sources[0], ranks=merged))


async def test_nine_shows_each_step_by_rank_with_the_slowest_the_waits_and_the_divergence():
    app = merged_app()
    async with app.run_test(size=(160, 40)) as pilot:
        text = screen_text(app)
        assert "rank 0 of 2; rank 1 beside it in the Ranks tab (9)" in text
        assert "Findings (3)" in text  # the job's two stragglers and its divergence
        await pilot.press("9")
        assert app.active_tab() == "ranks"
        lines = screen_text(app).splitlines()
        rows = [" ".join(line.split()) for line in lines]
        assert any("0 0 B=100 v0 10.0 10.0 40.0" in r for r in rows), "\n".join(lines)
        assert any("0 1 B=1000 v1 50.0 50.0 slowest" in r for r in rows)
        assert any("1 1 B=100 v0 10.0 10.0 40.0" in r for r in rows)
        text = "\n".join(lines)
        assert "multi_kernel_0 v2 differ:" in text
        assert "rank 1: v2 (hint 4096): BLOCK_M=32" in text
        assert "straggler: rank 1's pick in multi_kernel_0" in text


async def test_one_session_has_no_ranks_tab_and_nine_says_why(recorded_app):
    async with recorded_app.run_test(size=(160, 40), notifications=True) as pilot:
        assert "Ranks" not in screen_text(recorded_app)
        await pilot.press("9")
        assert recorded_app.active_tab() == "variants"
        await wait_until(pilot, lambda: any("9 shows a torchrun job's ranks side by side; this is one session"
                                            in t for t in toasts(recorded_app)))
        assert "Ranks" not in [b.description for b in recorded_app.palette_bindings()]


async def test_the_ranks_tab_scrolls_to_every_ranks_divergence_and_every_straggler_with_its_tab_bar_whole():
    samples = Path(__file__).resolve().parents[2] / "samples"
    files = [str(samples / f"ddp.rank{r}.session.json") for r in (0, 1)]
    merged = merge([load(f) for f in files], files)
    stragglers = [f.message for f in merged.findings if f.kind == "straggler"]
    assert len(stragglers) >= 2 and merged.divergences
    app = InspectorApp(RecordedSource(merged.lead(), merged.sources[0], ranks=merged))
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.press("9")
        for height, presses in ((60, 0), (40, len(merged.table().rows) + 30)):  # ↓ past the last row scrolls on
            await pilot.resize_terminal(120, height)
            await pilot.pause()
            tabs = next(line for line in screen_text(app).splitlines() if "Ranks (" in line)
            assert "Variants" in tabs and "Ranks (2)" in tabs, tabs  # every label whole
            seen: list[str] = []
            for i in range(presses + 1):
                if i % 8 == 0 or i == presses:
                    seen += [line.split("▕")[-1].strip() for line in screen_text(app).splitlines()]
                if i < presses:
                    await pilot.press("down")
            text = " ".join(" ".join(seen).split())
            for d in merged.divergences:
                assert f"{d.site} " in text and all(f"rank {r}:" in text for ranks, _ in d.groups for r in ranks)
            for message in stragglers:
                assert " ".join(f"straggler: {message}".split())[:60] in text, message
