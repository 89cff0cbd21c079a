"""`kinspect plot` and the Markdown report's map image, on the swept linear sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinspect import cli

pytest.importorskip("matplotlib")
SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_plot_draws_every_sites_map_as_png_and_svg(tmp_path, capsys):
    for name in ("map.png", "map.svg"):
        assert cli.main(["plot", str(SAMPLES / "gpt2.session.json"), "-o", str(tmp_path / name)]) == 0
        assert "wrote" in capsys.readouterr().out and (tmp_path / name).stat().st_size > 10_000
    assert (tmp_path / "map.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "map.svg").read_bytes()[:500]


def test_plot_refuses_in_one_line(tmp_path, capsys):
    assert cli.main(["plot", str(SAMPLES / "linear.session.json"), "-o", str(tmp_path / "map.txt")]) == 2
    assert capsys.readouterr().err == "kinspect: error: map.txt: an image file ends in .png or .svg\n"
    assert cli.main(["plot", str(SAMPLES / "linear.session.json"), "-o", str(tmp_path / "m.png"), "--site", "x"]) == 2
    assert "no site named 'x'" in capsys.readouterr().err


def test_a_markdown_report_links_the_map_drawn_beside_it(tmp_path, capsys):
    out = tmp_path / "linear.md"
    assert cli.main(["export", str(SAMPLES / "linear.session.json"), "--format", "md", "-o", str(out)]) == 0
    text = out.read_text()
    assert "![decision map](linear.map.png)" in text and (tmp_path / "linear.map.png").is_file()
    assert "## Quality" in text and "| **whole model** |" in text and "| current |" in text
