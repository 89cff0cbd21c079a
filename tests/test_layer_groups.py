"""Call sites of repeated layers fold into one line: in the unit, and in `kinspect explain`."""

from __future__ import annotations

from dataclasses import replace

from kinspect.core.session.call_sites import group_layers
from kinspect.core.session.model import CallSite
from kinspect.core.store import save


def layer(i: int, module: str, lineno: int = 312, cls: str = "Conv1D") -> CallSite:
    return CallSite(i, f"buf{i}", None, None, module, cls, "/x/transformers/modeling_gpt2.py", lineno, "self.c_attn(x)")


def test_twelve_layers_fold_into_one_range():
    calls = [layer(i, f"h.{i}.attn.c_attn") for i in range(12)]
    (g,) = group_layers(calls)
    assert g.label == "h.{0..11}.attn.c_attn"
    assert [c.index for c in g.members] == list(range(12))


def test_gaps_runs_and_two_layers_are_spelled_out():
    calls = [layer(i, f"h.{i}.mlp") for i in (0, 1, 2, 3, 5, 7, 8)]
    assert [g.label for g in group_layers(calls)] == ["h.{0..3,5,7,8}.mlp"]
    assert [g.label for g in group_layers(calls[:2])] == ["h.{0,1}.mlp"]


def test_a_layer_unlike_the_others_stays_on_its_own_line():
    calls = [layer(0, "h.0.attn.c_attn", lineno=300), layer(1, "h.1.attn.c_attn"), layer(2, "h.2.attn.c_attn"),
             layer(3, "lm_head", cls="Linear"), CallSite(4, "buf9")]
    assert [g.label for g in group_layers(calls)] == ["h.0.attn.c_attn", "h.{1,2}.attn.c_attn", "lm_head", "buf9"]


def test_a_constant_index_is_kept_and_two_varying_indices_fold_each():
    calls = [layer(0, "enc.0.h.3.ff"), layer(1, "enc.0.h.4.ff")]
    assert [g.label for g in group_layers(calls)] == ["enc.0.h.{3,4}.ff"]
    calls = [layer(i * 2 + j, f"enc.{i}.h.{j}.ff") for i in range(2) for j in range(3)]
    assert [g.label for g in group_layers(calls)] == ["enc.{0,1}.h.{0..2}.ff"]


def test_explain_lists_a_twelve_layer_site_on_one_line(kinspect_cli, synthetic, tmp_path):
    site = replace(synthetic.sites[0], call_sites=tuple(layer(i, f"h.{i}.attn.c_attn") for i in range(12)))
    synthetic.sites[0] = site
    path = tmp_path / "twelve.session.json"
    save(synthetic, path)
    out = kinspect_cli("explain", path).stdout
    assert "h.{0..11}.attn.c_attn (Conv1D) modeling_gpt2.py:312 · 12 callers" in out
    assert "h.5.attn.c_attn" not in out
