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
    assert "  - `multi_kernel_0`: Inductor keys each hint's variant with the hint itself" in findings
