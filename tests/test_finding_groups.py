"""Findings that read on a real model: grouped by kind with a count, worst first, each
group opening to its members, in the user's names; in explain and the report alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinspect.core.export import render
from kinspect.core.quality.finding_groups import group_findings
from kinspect.core.store import load

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def gpt2():
    return load(SAMPLES / "gpt2.session.json")


def test_gpt2s_findings_fold_into_groups_worst_first(gpt2):
    groups = group_findings(gpt2.findings)
    titles = [g.title for g in groups]
    assert "key-not-true-size at 4 sites" in titles
    assert len(groups) < len(gpt2.findings) / 2
    ranks = ["error", "warning", "info"]
    assert [ranks.index(g.severity) for g in groups] == sorted(ranks.index(g.severity) for g in groups)
    assert sum(len(g.members) for g in groups) == len(gpt2.findings)


def test_findings_name_tensors_and_sizes_as_the_user_does(gpt2):
    texts = [f.message for f in gpt2.findings if f.kind == "key-not-true-size"]
    assert "out dim 0 is B*S (4096 at hint 64, 65536 at hint 256, 16777216 at hint 4096)" in texts[0]
    assert not [t for t in texts if "buf" in t or "s33" in t]


def test_the_report_groups_findings_and_is_titled_after_the_model(gpt2):
    text = render(gpt2, "md")
    assert text.startswith("# kinspect report: gpt2\n")
    findings = text.split("## Findings")[1].split("## ")[0]
    assert "- **key-not-true-size at 4 sites** (info)" in findings
    assert ("  - `multi_kernel_0`, `multi_kernel_1`, `multi_kernel_2`, `multi_kernel_3`: Inductor keys each hint's "
            "variant with the hint itself") in findings  # said once for the four sites that say it alike


def test_what_a_kinds_findings_say_alike_is_said_once_with_their_sites(kinspect_cli):
    out = kinspect_cli("explain", str(SAMPLES / "gpt2.session.json")).stdout
    text = " ".join(out.split())
    shared = "Inductor gives this GEMM's kernel the hint for each size symbol (M = ks0*ks1)"
    assert text.count(shared) == 1
    assert f"multi_kernel_0, multi_kernel_1, multi_kernel_2, multi_kernel_3: {shared}" in text
    assert "multi_kernel_2: at hint 4096 M * N = 16,777,216 × 3,072 wraps to 0 in int32" in text
    assert "empty launch" not in text and "autotuned at" not in text


def test_a_group_with_nothing_in_common_reads_each_member_whole(gpt2):
    (g,) = [g for g in group_findings(gpt2.findings) if g.kind == "shared-cache"]
    assert g.shared is None and [g.own(f) for f in g.members] == [f.message for f in g.members]
