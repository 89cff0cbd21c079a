"""Compile-to-compile variance on the H200 recording of samples/linear.py, with a second
compile made from it: spreads per variant and key, the `unstable-autotune` finding, the
regret of each compile, and the session fields that store them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from recompiles import again

from kinspect.core.errors import KinspectError
from kinspect.core.quality.findings import derive_findings
from kinspect.core.quality.overview import site_quality
from kinspect.core.session.runtime import Baseline, Measurement
from kinspect.core.store import load, save
from kinspect.core.quality.variance import compiles, regret_spread, spreads, unstable_autotune

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def recorded():
    return load(SAMPLES / "linear.session.json")


def test_a_hint_whose_kernel_changed_with_a_real_difference_is_unstable_autotune():
    s = recorded()
    s.recompiles.append(again(s, 1.5, kernel_changed=True))
    (f,) = unstable_autotune(s)
    assert f.kind == "unstable-autotune" and f.site == "multi_kernel_0" and f.variants == (1,)
    assert f.message.startswith("hint 256 emitted 2 different kernels over 2 compiles; at B=")
    assert "(×1.50): one compile's figures for this hint may mislead" in f.message
    assert "unstable-autotune" in {x.kind for x in derive_findings(s)}


@pytest.mark.parametrize("factor, changed", [(1.08, True), (1.5, False)], ids=["within 10%", "same kernel"])
def test_noise_alone_or_a_small_difference_is_not_unstable(factor, changed):
    s = recorded()
    s.recompiles.append(again(s, factor, kernel_changed=changed))
    assert unstable_autotune(s) == []


def test_spreads_are_per_variant_and_key_across_compiles():
    s = recorded()
    s.recompiles.append(again(s, 1.25, kernel_changed=True))
    s.recompiles.append(replace(again(s, 1.0, False), hints=(64, 4096)))  # other hints: not the same compile
    runs = compiles(s)
    assert [r.label for r in runs] == ["compile 0 (inspected)", "compile 1 (fresh)"]
    found = spreads(s, runs)
    assert {x.hint for x in found} == {64, 256, 4096}
    assert {round(x.ratio, 6) for x in found if x.hint == 256} == {1.25}
    assert {x.ratio for x in found if x.hint != 256} == {1.0}
    assert all(x.kernel_changed == (x.hint == 256) for x in found)


def test_each_compiles_regret_is_its_own_and_compile_0_is_the_quality_figure():
    s = recorded()
    s.recompiles.append(again(s, 1.0, False))
    s.recompiles.append(again(s, 2.0, True))
    spread = regret_spread(s)["multi_kernel_0"]
    assert len(spread) == 3
    one = site_quality(s, s.sites[0]).geomean_regret
    assert spread[0] == pytest.approx(one, rel=1e-9) and spread[1] == pytest.approx(one, rel=1e-9)
    assert spread[2] > spread[0]  # where v1 (hint 256) is picked, it is now slower than the fastest


def test_recompiles_and_inspected_baselines_survive_a_save_and_old_sessions_open(tmp_path):
    s = recorded()
    assert s.recompiles == []  # recorded before kinspect compare: still opens
    s.recompiles.append(again(s, 1.5, True))
    s.baselines.append(Baseline({"B": 100}, "oracle", 30.0, 20.0, inspected=True))
    save(s, tmp_path / "s.json")
    back = load(tmp_path / "s.json")
    assert back.recompiles == s.recompiles and back.baselines[-1] == s.baselines[-1]
    assert "unstable-autotune" in {f.kind for f in back.findings}  # derived afresh on load
    schema = json.loads((Path(__file__).resolve().parent.parent / "kinspect" / "core" / "session" / "format" / "session.schema.json").read_text())
    jsonschema.validate(json.loads((tmp_path / "s.json").read_text()), schema)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["baselines"].append({"sizes": {"B": 1}, "kind": "oracle", "gpu_us": 1.0}),
     "baselines[0].kind: oracle is only timed on the inspected compile"),
    (lambda d: d["recompiles"].append({"hints": [64], "purpose": "guess", "variants": {}}),
     "recompiles[0].purpose: must be one of variance, verify"),
    (lambda d: d["recompiles"].append({"hints": [64], "purpose": "verify", "variants": {"mk": [{"hint": 64}]}}),
     "recompiles[0].variants.mk[0].kernel: expected a string"),
])
def test_bad_new_fields_are_one_line_errors(tmp_path, change, message):
    d = json.loads((SAMPLES / "linear.session.json").read_text())
    d["baselines"], d["recompiles"] = [], []
    change(d)
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(KinspectError) as e:
        load(tmp_path / "bad.json")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_recompile_measurement_is_data_for_its_own_compile():
    s = recorded()
    r = again(s, 1.0, False)
    extra = Measurement("multi_kernel_0", s.measurements[0].key, 7, "cupti", 5.0)  # v7: that compile had 8 hints
    s.recompiles.append(replace(r, hints=tuple(range(1, 9)), measurements=(*r.measurements, extra)))
    assert compiles(s)[1:] == []  # other hints: not a compile of the session's


def test_the_report_gives_the_regret_its_range_over_compiles_and_each_variants_spread():
    from kinspect.core.export import render

    s = recorded()
    for b in (100, 1000):
        s.baselines += [Baseline({"B": b}, kind, 30.0, 20.0, inspected=kind in ("hinted", "oracle"))
                        for kind in ("hinted", "oracle", "exact_hint", "static", "eager")]
    s.recompiles.append(again(s, 2.0, True))
    low, high = sorted(regret_spread(s)["multi_kernel_0"])
    row = next(line for line in render(s, "md").splitlines() if line.startswith("| `multi_kernel_0` |"))
    assert f"(×{low:.2f}–×{high:.2f} over 2 compiles)" in row
    assert "over 2 compiles" not in render(recorded(), "md")
    section = render(s, "md").split("## Comparison", 1)[1].split("## Decisions", 1)[0]
    spread = [line for line in section.splitlines() if line.startswith("| `multi_kernel_0` | ")]
    assert spread[-3].startswith("| `multi_kernel_0` | 256 | `B=") and spread[-3].endswith(" | ×2.00 | changed |")
    assert spread[-1].endswith(" | ×1.00 | same |")


def test_one_compile_has_no_regret_spread():
    """A spread needs two compiles; with one, nothing is decided again for it."""
    from synthetic import synthetic_session

    s = synthetic_session(sites=2, variants=3)
    assert len(compiles(s)) == 1 and regret_spread(s) == {}
