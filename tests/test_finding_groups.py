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


def test_many_findings_are_listed_a_page_a_kind_with_what_is_left_out(tmp_path, kinspect_cli):
    from synthetic import synthetic_session

    from kinspect.core.session.model import Finding
    from kinspect.core.store import save
    from kinspect.tui.widgets.findings_list import FindingsList

    s = synthetic_session(sites=3, variants=3, events=10, seed=1)
    s.findings = [Finding(f"kind{i % 60}", f"message {i}", "warning", site=s.sites[i % 3].name)
                  for i in range(6_000)]  # 60 kinds of 100: more kinds, and more of each, than a page shows
    save(s, tmp_path / "s.json")
    out = kinspect_cli("explain", tmp_path / "s.json").stdout
    assert 0 < out.count("message ") <= 50 * 20 and len(out.splitlines()) < 1300  # 20 of each of the 50 worst kinds
    assert "… and 80 more kind0 findings (kinspect explain --json and the JSON export hold every one)" in out
    assert "more kinds of finding" in out
    report = render(load(tmp_path / "s.json"), "md")
    assert report.count("message ") == out.count("message ") and "80 more kind0 findings" in report
    listing = FindingsList(load(tmp_path / "s.json").findings)
    listing._open = {"kind0"}
    assert len(listing._entries()) == 50 + 20 + 2  # the headings, kind0's first 20, and two lines for the rest


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
