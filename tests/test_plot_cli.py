"""`kinspect plot` and the Markdown report's map image, on the swept linear sample."""

from __future__ import annotations

import json
import math
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


def test_a_plotted_heatmaps_unmeasured_cells_look_unlike_its_x1_cells():
    """gemm_2d's M x N map: a cell without a measurement is grey and hatched, not blank
    beside the near-white of ×1.00."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kinspect import images
    from kinspect.core.quality.decision_map import Heatmap
    from kinspect.core.store import load

    m = next(m for m in images.maps(load(SAMPLES / "gemm_2d.session.json")) if isinstance(m, Heatmap))
    fig, ax = plt.subplots(figsize=(9, 3.6))
    images._heatmap(fig, ax, m)
    fig.canvas.draw()
    pixels = __import__("numpy").asarray(fig.canvas.buffer_rgba())
    height = fig.canvas.get_width_height()[1]

    xs, ys = images._edges(m.xs), images._edges(m.ys)

    def color(x: int, y: int) -> tuple[int, ...]:
        px, py = ax.transData.transform((math.sqrt(xs[x] * xs[x + 1]), math.sqrt(ys[y] * ys[y + 1])))
        return tuple(int(c) for c in pixels[height - int(py), int(px)][:3])

    def wide(x: int, y: int) -> bool:
        (x0, y0), (x1, y1) = ax.transData.transform([(xs[x], ys[y]), (xs[x + 1], ys[y + 1])])
        return x1 - x0 > 8 and y1 - y0 > 8  # 64 beside 65: a cell a pixel wide, its color its edges'

    cells = [(x, y) for y, row in enumerate(m.regret) for x, _ in enumerate(row) if wide(x, y)]
    fastest = [color(x, y) for x, y in cells if m.regret[y][x] is not None and m.regret[y][x] < 1.005]
    unmeasured = [color(x, y) for x, y in cells if m.regret[y][x] is None]
    plt.close(fig)
    assert fastest and unmeasured
    apart = min(sum(abs(a - b) for a, b in zip(u, f)) for u in unmeasured for f in fastest)
    assert apart > 60, (unmeasured[:3], fastest[:3])  # more than a tint (blank read as the palest red)


@pytest.mark.parametrize("name", ["$$", r"$\foo$", "a$b\u202ec$"])
def test_mathtext_and_bidi_in_a_site_name_are_drawn_and_reported_as_text(tmp_path, capsys, name):
    pytest.importorskip("matplotlib")
    text = (SAMPLES / "linear.session.json").read_text(encoding="utf-8")
    path = tmp_path / "s.json"
    path.write_text(text.replace('"multi_kernel_0"', json.dumps(name, ensure_ascii=False)), encoding="utf-8")
    assert cli.main(["plot", str(path), "-o", str(tmp_path / "m.svg")]) == 0, capsys.readouterr().err
    assert cli.main(["export", str(path), "--format", "md", "-o", str(tmp_path / "r.md")]) == 0
    report = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "\u202e" not in report and name.replace("$", "\\$").replace("\\f", "\\\\f").replace(
        "\u202e", "\\\\u202e") in report
    assert (tmp_path / "r.map.png").stat().st_size > 0


def test_a_plotted_heatmap_has_log_axes_and_a_scale_from_green_at_x1_to_red_at_x2():
    """GPT-2's B x S map: sizes on log axes (a cell is as wide as the sizes nearest it, so
    the sweep's gaps show), ×1 green and ×2 or more red, whatever the worst regret."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kinspect import images
    from kinspect.core.quality.decision_map import Heatmap
    from kinspect.core.store import load

    m = next(m for m in images.maps(load(SAMPLES / "gpt2.session.json")) if isinstance(m, Heatmap))
    fig, ax = plt.subplots(figsize=(9, 3.6))
    images._heatmap(fig, ax, m)
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    bar = fig.axes[-1]
    assert [t.get_text() for t in bar.get_yticklabels()] == ["×1.00", "×1.10", "×1.25", "×1.50", "≥×2.00"]
    mesh = ax.collections[0]
    green, red = mesh.to_rgba(1.0), mesh.to_rgba(3.95)
    plt.close(fig)
    assert green[1] > green[0] and red[0] > red[1]
