"""`kinspect compare A.session.json B.session.json`: two recordings of one program side by
side, matched site by site by what the user calls each site, on any machine."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

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


def _slower_pick(session, factor):
    """The session with Inductor's pick at each measured key `factor` times slower than the
    fastest other variant: another compile's autotuning chose worse configs for the same
    problems."""
    from kinspect.core.quality.overview import pick

    sites = {s.name: s for s in session.sites}
    out = []
    for m in session.measurements:
        if m.variant == pick(sites[m.site], m.key):
            best = min(o.median_us for o in session.measurements if (o.site, o.key) == (m.site, m.key) and o is not m)
            m = replace(m, median_us=best * factor, p20_us=best * factor * 0.99, p80_us=best * factor * 1.01)
        out.append(m)
    session.measurements = out
    return session


def _mlp_pair(tmp_path, retune: bool):
    """The MLP training loop on the GPU, stock x1.00 against fixed x1.50 at one Linear: one
    size symbol per GEMM, so both modes tuned the same problem at every hint; `retune`: the
    fixed compile's autotuning settled on another config at the first hint."""
    stock = _called(synthetic_session(sites=2, seed=1))
    fixed = _called(synthetic_session(sites=2, seed=1))
    if retune:
        site = fixed.sites[1]
        v0 = replace(site.variants[0], config={**site.variants[0].config, "BLOCK_M": 128, "num_warps": 8})
        fixed.sites[1] = replace(site, variants=(v0, *site.variants[1:]))
    fixed.measurements = [m for m in fixed.measurements if m.site == "multi_kernel_1"]
    _slower_pick(fixed, 1.5)
    stock.measurements = [m for m in stock.measurements if m.site == "multi_kernel_1"]
    for name, s in (("mlp.stock", stock), ("mlp.fixed", fixed)):
        save(s, tmp_path / f"{name}.session.json")
    return stock


def _below(tmp_path, capsys, a, b):
    assert cli.main(["compare", str(tmp_path / f"{a}.session.json"), str(tmp_path / f"{b}.session.json")]) == 0
    return capsys.readouterr().out.split("└")[-1]


def test_two_compiles_that_settled_on_other_configs_for_the_same_problems_name_the_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    stock = _mlp_pair(tmp_path, retune=True)
    below = _below(tmp_path, capsys, "mlp.stock", "mlp.fixed")
    line = next(x for x in below.splitlines() if x.startswith("graph_0 · mm · layers.1.fc"))
    v0 = stock.sites[1].variants[0]
    assert line.endswith(f": both compiles tuned the same problem at every hint, and autotuning settled on another "
                         f"config at hint {v0.hint} (stock: BLOCK_M={v0.config['BLOCK_M']}, num_warps="
                         f"{v0.config['num_warps']}; fixed: BLOCK_M=128, num_warps=8): autotuning's difference between "
                         "two compiles (more compiles of each tell which figure is typical)"), line
    assert "×1.00 against ×1.50 geomean" in line
    assert "whole model: ×1.00 against ×1.50 geomean" in below and "graph_0 · addmm" not in below


def test_the_same_kernels_timed_apart_are_not_called_autotuning(tmp_path, capsys, monkeypatch):
    """Same problem and same config at every hint: the two runs timed the same kernels apart."""
    monkeypatch.setenv("COLUMNS", "250")
    _mlp_pair(tmp_path, retune=False)
    below = _below(tmp_path, capsys, "mlp.stock", "mlp.fixed")
    line = next(x for x in below.splitlines() if x.startswith("graph_0 · mm · layers.1.fc"))
    assert line.endswith(": both compiles tuned the same problem and settled on the same config at every hint, so "
                         "the same kernels timed apart between the two runs (another GPU, or a busy one)"), line
    assert "autotuning's difference" not in line


def test_advise_candidate_run_against_its_verification_names_the_retuned_hint(tmp_path, capsys, monkeypatch):
    """The GPT-2-family training loop (H100, both switches, --autotune-device-time): advise's
    candidate run at 16, 32, 64, 4096 against its verification at 16, 32. At a backward GEMM
    of B*S x 384 x 1536 the verification reads x1.25 where the candidate run read x1.13: the
    hint-16 variant that Inductor's rule runs at 400 and 512 rows won with the same config in
    both, and hint 32's autotuning settled on another, faster one."""
    fixtures = Path(__file__).parent / "fixtures" / "sessions"
    monkeypatch.setenv("COLUMNS", "250")
    assert cli.main(["compare", str(fixtures / "gpt_train_candidates_16_32_64_4096_h100_2026-12-07.session.json"),
                     str(fixtures / "gpt_train_hints_16_32_h100_2026-12-07.session.json")]) == 0
    below = capsys.readouterr().out.split("└")[-1]
    line = next(x for x in below.splitlines() if x.startswith("graph_1 (backward) · mm · buf10 +1:"))
    assert line == ("graph_1 (backward) · mm · buf10 +1: ×1.13 against ×1.25 geomean, worst ×1.28 against ×1.60: "
                    "compiled at other hints (candidates_16_32_64_4096: 16, 32, 64, 4096; hints_16_32: 16, 32), so "
                    "each picks among other variants; both compiles tuned the same problem at the hints both compiled, "
                    "and autotuning settled on another config at hint 32 (candidates_16_32_64_4096: BLOCK_M=128, "
                    "num_warps=8, num_stages=5, registers=96, shared_bytes=163840; hints_16_32: BLOCK_M=64, "
                    "num_warps=4, num_stages=3, registers=103, shared_bytes=73728): autotuning's difference between "
                    "two compiles (more compiles of each tell which figure is typical)"), line
    assert "whole model" not in below  # the hint sets differ: not autotuning's alone


def test_compiles_that_tuned_different_problems_say_at_which_hints_and_what_each_tuned(tmp_path, capsys, monkeypatch):
    """A B*S GEMM: stock Inductor's variant at hint 64 has a key of 64 rows on a kernel
    computing 64*64; with one size per symbol the key holds the 4,096 rows the kernel
    computes. The two compiles' figures are not autotuning noise alone, and compare says why."""
    from kinspect.core.dispatch.hint_sizes import Assignment
    from kinspect.core.session.model import Environment, Session
    from kinspect.core.session.runtime import Measurement

    from synthetic import product_rows_site

    monkeypatch.setenv("COLUMNS", "250")
    env = Environment("2026-12-01T00:00:00Z", torch="2.11.0", gpu="NVIDIA H200")
    stock_site = product_rows_site()  # each variant's kernel its own, as autotuning picks configs apart
    stock_site = replace(stock_site, variants=tuple(replace(v, source=f"{v.source}# config {v.index}\n")
                                                    for v in stock_site.variants))
    tuned = tuple(Assignment(h, {"s27": h, "s52": h}) for h in (64, 256, 4096))
    fixed_site = replace(stock_site, variants=tuple(
        replace(v, key=tuple(t.key_at_hint(v.hint, tuned[v.index].values) for t in stock_site.tensors))
        for v in stock_site.variants))
    sessions = []
    for site, graph, times in ((stock_site, Graph("graph_0", sites=("multi_kernel_0",)), (40.0, 30.0, 20.0)),
                               (fixed_site, Graph("graph_0", sites=("multi_kernel_0",), hint_sizes=tuned), (20.0, 21.0, 22.0))):
        key = site.runtime_key({"s27": 8, "s52": 8})  # 64 rows: hint 64's variant is the pick
        sessions.append(Session(environment=env, graphs=[graph], sites=[site], measurements=[
            Measurement(site.name, key, v.index, "cuda-event", t, t * 0.99, t * 1.01, 50)
            for v, t in zip(site.variants, times)]))
    for name, s in zip(("bs.stock", "bs.fixed"), sessions):
        save(s, tmp_path / f"{name}.session.json")
    assert cli.main(["compare", str(tmp_path / "bs.stock.session.json"), str(tmp_path / "bs.fixed.session.json")]) == 0
    below = capsys.readouterr().out.split("└")[-1]
    line = next(x for x in below.splitlines() if x.startswith("graph_0 · addmm"))
    assert "×2.00 against ×1.00 geomean" in line
    assert line.endswith(": the compiles tuned different problems at hints 64, 256, 4096 (at 64, stock: 64 rows "
                         "on a kernel computing 4,096; fixed: 4,096 rows)")
    assert "whole model" not in below


def test_a_hint_that_shares_a_variant_is_compared_on_the_problem_it_was_tuned_at():
    """With one size per symbol hint 4096 was lowered to hint 256's sizes, so the fixed compile
    has one variant for both; against a compile of the same problems at all three hints (keys
    64, 256, 256), every hint tuned the same problem."""
    from kinspect.core.dispatch.hint_sizes import Assignment
    from kinspect.core.session.model import Environment, Session
    from kinspect.core.quality.side_by_side import side_by_side

    from synthetic import product_rows_site

    tuned = (Assignment(64, {"s27": 8, "s52": 8}), Assignment(256, {"s27": 16, "s52": 16}),
             Assignment(4096, {"s27": 16, "s52": 16}))
    site = product_rows_site()
    keyed = tuple(replace(v, key=tuple(t.key_at_hint(v.hint, tuned[v.index].values) for t in site.tensors))
                  for v in site.variants)
    both = replace(site, variants=keyed)
    shared = replace(site, variants=(keyed[0], replace(keyed[2], index=1)))
    env = Environment("2026-12-06T00:00:00Z", torch="2.11.0", gpu="NVIDIA H100 80GB HBM3")
    sessions = [Session(environment=env, graphs=[Graph("graph_0", sites=("multi_kernel_0",), hint_sizes=tuned)],
                        sites=[s]) for s in (both, shared)]
    rows, _ = side_by_side(*sessions)
    assert [v.hint for v in shared.variants] == [64, 4096] and rows[0].differ == ()


def test_problems_with_the_same_rows_are_told_apart_by_their_whole_keys():
    """Two compiles that keyed hint 64 on the same rows but another width (a fresh compile
    that lowered the GEMM with other arguments): the line shows both keys."""
    from kinspect.core.quality.side_by_side import Row, Side, Tuned, what_differed

    a = {64: Tuned(((64, 768), (768, 2304), (64, 2304)))}
    b = {64: Tuned(((64, 768), (768, 3072), (64, 3072)))}
    row = Row("graph_0 · mm · fc", (Side(5, 1.0, 1.0), Side(5, 1.3, 1.5)), (a, b))
    (line,) = what_differed(("stock", "fixed"), [row], Row("whole model", (Side(), Side())))
    assert line.endswith("at hint 64 (stock: key ((64, 768), (768, 2304), (64, 2304)); "
                         "fixed: key ((64, 768), (768, 3072), (64, 3072)))")


def test_compiles_whose_variants_run_other_hints_choices_say_which_not_autotuning(tmp_path, capsys, monkeypatch):
    """The ResNet-18 recorded stock (H100): its layer2.1.conv1 runs hint 256's choice at hint
    4096. Against a compile of the same problems where each variant runs its own hint's
    choice (`--fusion-per-hint`) and picks 1.5 times slower, compare does not call the
    difference autotuning's alone: it says which variants ran another hint's choice."""
    from kinspect.core.store import load

    monkeypatch.setenv("COLUMNS", "250")
    stock = load(Path(__file__).parent / "fixtures" / "sessions" / "resnet18_stock_h100_2026-12-06.session.json")
    fixed = load(Path(__file__).parent / "fixtures" / "sessions" / "resnet18_stock_h100_2026-12-06.session.json")
    fixed.sites = [replace(s, variants=tuple(replace(v, emitted=v.winner) for v in s.variants)) for s in fixed.sites]
    _slower_pick(fixed, 1.5)
    save(stock, tmp_path / "cnn.stock.session.json")
    save(fixed, tmp_path / "cnn.fixed.session.json")
    assert cli.main(["compare", str(tmp_path / "cnn.stock.session.json"), str(tmp_path / "cnn.fixed.session.json")]) == 0
    below = capsys.readouterr().out.split("└")[-1]
    line = next(x for x in below.splitlines() if x.startswith("graph_0 (inference) · convolution · layer2.1.conv1:"))
    assert line.endswith(": ×1.00 against ×1.45 geomean, worst ×1.00 against ×1.46: both compiles tuned the same "
                         "problem at every hint, but not every variant runs a choice of its own hint (Inductor's "
                         "epilogue-fusion benchmark; --fusion-per-hint): stock: hint 4096 runs hint 256's choice; "
                         "fixed: each variant runs a choice of its own hint")
    assert "autotuning's difference" not in below and "whole model" not in below


def test_each_recordings_variants_on_other_hints_choices_are_listed_in_hint_order():
    from kinspect.core.quality.side_by_side import Row, Side, Tuned, what_differed

    same = {h: Tuned(((h, 64), (64, 64), (h, 64))) for h in (64, 256, 4096)}
    row = Row("graph_0 · addmm · fc", (Side(5, 1.0, 1.0), Side(5, 1.3, 1.5)), (same, same), ({}, {4096: 64, 256: 64}))
    (line,) = what_differed(("stock", "fixed"), [row], Row("whole model", (Side(), Side())))
    assert line.endswith("stock: each variant runs a choice of its own hint; fixed: hint 256 runs hint 64's choice, "
                         "hint 4096 runs hint 64's choice")


def test_sites_alike_in_graph_op_and_call_sites_each_get_a_row_of_their_own(tmp_path, capsys, monkeypatch):
    """The MoE stack (H100, both switches) has two `mm` sites on the same two modules (the
    experts' up- and down-projections): each keeps a row, told apart by its order in the
    graph's code, and against another compile numbered apart each is held against itself."""
    from kinspect.core.store import load

    monkeypatch.setenv("COLUMNS", "250")
    moe = load(Path(__file__).parent / "fixtures" / "sessions" / "moe_layers_fixed_h100_2026-12-06.session.json")
    other = load(Path(__file__).parent / "fixtures" / "sessions" / "moe_layers_fixed_h100_2026-12-06.session.json")
    renamed = {s.name: f"multi_kernel_{9 - i}" for i, s in enumerate(other.sites)}
    other.sites = [replace(s, name=renamed[s.name]) for s in other.sites]
    other.measurements = [replace(m, site=renamed[m.site]) for m in other.measurements]
    other.events = [replace(e, site=renamed[e.site]) for e in other.events]
    rows, _ = side_by_side(moe, other)
    alike = [r.label for r in rows if r.label.startswith("graph_0 (inference) · mm · 0 (MoE) +1")]
    assert alike == ["graph_0 (inference) · mm · 0 (MoE) +1 #1", "graph_0 (inference) · mm · 0 (MoE) +1 #2"]
    assert len(rows) == len(moe.sites) == 6
    assert all(r.sides[0] == r.sides[1] and r.sides[0].shapes > 0 for r in rows)
