"""`kinspect compare A.session.json B.session.json`: two recordings of one program side by
side, matched site by site by what the user calls each site, on any machine."""

from __future__ import annotations

from dataclasses import replace

from synthetic import synthetic_session

from kinspect import cli
from kinspect.core.quality.overview import model_quality
from kinspect.core.quality.side_by_side import side_by_side
from kinspect.core.session.model import CallSite, Graph
from kinspect.core.store import save


def _called(session):
    """Each site called from a module of its own, as a recording names it."""
    session.sites = [replace(s, call_sites=(CallSite(0, f"buf{i}", f"{s.name}.run(x)", 10, f"layers.{i}.fc", "Linear"),))
                     for i, s in enumerate(session.sites)]
    return session


def test_sites_are_matched_by_their_label_and_the_whole_model_is_each_recordings_own(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # a terminal wide enough for both recordings' columns
    stock, fixed = _called(synthetic_session(sites=2, seed=1)), _called(synthetic_session(sites=3, seed=2))
    # Another compile numbers its multi-kernels apart: the second recording's names are shifted.
    fixed.sites = [replace(s, name=f"multi_kernel_{i + 7}") for i, s in enumerate(fixed.sites)]
    renamed = {f"multi_kernel_{i}": f"multi_kernel_{i + 7}" for i in range(3)}
    fixed.measurements = [replace(m, site=renamed[m.site]) for m in fixed.measurements]
    rows, whole = side_by_side(stock, fixed)
    assert len(rows) == 3 and rows[2].sides[0].shapes == 0 and rows[2].sides[1].shapes > 0
    assert whole.sides[0].geomean == model_quality(stock).geomean_regret
    assert whole.sides[1].geomean == model_quality(fixed).geomean_regret
    for name, s in (("stock", stock), ("fixed", fixed)):
        save(s, tmp_path / f"{name}.session.json")
    assert cli.main(["compare", str(tmp_path / "stock.session.json"), str(tmp_path / "fixed.session.json")]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "stock" in line)
    assert header.count("stock") == 4 and header.count("fixed") == 4
    whole_line = next(line for line in out.splitlines() if "whole model" in line)
    assert f"×{whole.sides[0].geomean:.2f}" in whole_line and f"×{whole.sides[1].geomean:.2f}" in whole_line
    third = [line for line in out.splitlines() if rows[2].label.split(" · ")[-1] in line and "·" in line]
    assert third and third[0].split("│")[2].strip() == "-"  # the stock recording has no such site


def test_a_recording_without_a_site_says_so(tmp_path, capsys):
    empty = synthetic_session(sites=1)
    empty.sites, empty.measurements = [], []
    save(empty, tmp_path / "stock.session.json")
    save(synthetic_session(sites=1), tmp_path / "fixed.session.json")
    assert cli.main(["compare", str(tmp_path / "stock.session.json"), str(tmp_path / "fixed.session.json")]) == 0
    assert "stock: no size-hint multi-kernel was recorded" in capsys.readouterr().out


def test_a_recording_that_died_untimed_says_why_its_columns_are_empty(tmp_path, capsys):
    """A stock Llama under --compile-layers-once on the GPU: 4 sites saved, a fault at hint 64
    broke the GPU context so nothing was timed, and its last graph's compile died."""
    stock = synthetic_session(sites=2)
    stock.measurements = []
    reason = ("Inductor raised before it wrote this graph's code, so no kernel was chosen: at hint 64, mm's buf1 was "
              "autotuned on a tensor smaller than its kernel reads")
    stock.graphs = [*stock.graphs, Graph("graph_4 (inference)", no_site_reason=reason)]
    save(stock, tmp_path / "llama.stock.session.json")
    save(synthetic_session(sites=2), tmp_path / "llama.fixed.session.json")
    assert cli.main(["compare", str(tmp_path / "llama.stock.session.json"),
                     str(tmp_path / "llama.fixed.session.json")]) == 0
    out = capsys.readouterr().out
    assert "stock: 2 sites recorded, none timed (recorded without --measure, or a CUDA fault in the program had " \
           "left nothing to time with)" in out
    died = next(line for line in out.splitlines() if line.startswith("stock: graph_4"))
    assert "at hint 64, mm's buf1 was autotuned on a tensor smaller than its kernel reads" in died
    assert "fixed:" not in out.split("└")[-1]  # the fixed recording lacks nothing


def test_columns_are_labelled_by_what_tells_the_two_names_apart(tmp_path, capsys, monkeypatch):
    """`mlp_train.stock` and `mlp_train.fixed` on a 120-column terminal: the columns say
    `stock` and `fixed` (the whole names were cut to `mlp_train.sto…` and squeezed the site
    column into five lines), and a line above says which file each is."""
    monkeypatch.setenv("COLUMNS", "120")
    for name, seed in (("stock", 1), ("fixed", 2)):
        save(_called(synthetic_session(sites=2, seed=seed)), tmp_path / f"mlp_train.{name}.session.json")
    a, b = (str(tmp_path / f"mlp_train.{name}.session.json") for name in ("stock", "fixed"))
    assert cli.main(["compare", a, b]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"stock: {a}  ·  fixed: {b}"
    header = next(line for line in lines if "geomean" in line)
    assert [c.strip() for c in header.split("┃")[2:-1]] == ["keys", "geomean", "worst", "lost"] * 2
    labels = next(line for line in lines if "stock" in line and "┃" in line)
    assert labels.count("stock") == 4 and labels.count("fixed") == 4 and "mlp_train" not in labels
    rows = [line for line in lines if "layers." in line or "whole model" in line]
    assert len(rows) == 3  # one line per site and the whole model: the site column is not squeezed


def test_labels_fall_back_to_the_names_where_nothing_shorter_tells_them_apart():
    from kinspect.commands.compare import recording_labels

    assert recording_labels("vit.stock.h200", "vit.fixed.h200") == ("stock", "fixed")
    assert recording_labels("gpt2", "gpt2_small") == ("gpt2", "gpt2_small")
    assert recording_labels("run", "run") == ("first", "second")
