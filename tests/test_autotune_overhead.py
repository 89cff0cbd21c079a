"""`autotune-timed-overhead`: an autotune time many times the kernel's own time at the same
problem, on a GPU session of the MLP training loop and on a made-up site."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from synthetic import product_rows_site

from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.model import Environment, Graph, Session, Site
from kinspect.core.session.runtime import Measurement
from kinspect.core.store import load

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
KIND = "autotune-timed-overhead"


def _found(site: Site, measurements=(), config=None) -> list:
    s = Session(environment=Environment("2026-12-07T00:00:00Z", gpu="synthetic", config=config or {}),
                graphs=[Graph("graph_0", sites=(site.name,))], sites=[site], measurements=list(measurements))
    return [f for f in derive_findings(s) if f.kind == KIND]


def test_the_h200_mlp_loops_hint_64_configs_were_ranked_on_the_hosts_launch():
    """The MLP training loop with both switches, alone on the H200: the backward GEMMs at hint
    64 were timed at 31.7 and 33.2 µs fused (every choice 12.2-34.3 µs alone), where the
    kernels run in 3.5 and 4.5 µs at the same sizes, and the forward's second at 26.6 µs for a
    9.4 µs kernel; hint 256's variant of the weight gradient then ran ×3.14 slower than the
    fastest within its own range."""
    s = load(SESSIONS / "mlp_train_fixed_h200_2026-12-07.session.json")
    found = {f.site: f for f in s.findings if f.kind == KIND}
    assert set(found) == {"multi_kernel_1", "multi_kernel_1@graph_1", "multi_kernel_2@graph_1"}
    assert "v0 (hint 64) was autotuned at 26.6 µs, where kinspect timed the same kernel at its own key at 9.4 µs" \
        in found["multi_kernel_1"].message
    f = found["multi_kernel_1@graph_1"]
    assert f.variants == (0,) and f.severity == "warning"
    assert ("v0 (hint 64) was fusion-benchmarked at 33.2 µs, where kinspect timed the same kernel at its own key at "
            "4.5 µs on the GPU; its 20 choices read 24.2 µs-30.5 µs alone") in f.message
    assert f.message.endswith("--autotune-device-time takes the host's launch out of their times)")


def test_autotune_times_of_the_kernels_order_say_nothing():
    """The same loop on an H100 whose host launched faster: hint 64 autotuned at 5.0-8.4 µs
    for kernels of 2.5-5.6 µs."""
    s = load(SESSIONS / "mlp_train_fixed_h100_2026-12-07.session.json")
    assert not [f for f in s.findings if f.kind == KIND]


def test_a_kernel_measured_slow_or_not_at_its_key_says_nothing():
    site = product_rows_site()
    v1 = site.variants[1]  # autotuned at 8.0 µs at hint 256
    slow = replace(v1, autotune=tuple(replace(r, time_us=40.0) for r in v1.autotune))
    site = replace(site, variants=(site.variants[0], slow, site.variants[2]))
    at_key = Measurement(site.name, v1.key, 1, "cupti", 4.0, p20_us=3.9, p80_us=4.2, samples=50)
    (f,) = _found(site, [at_key])
    assert "v1 (hint 256) was autotuned at 40.0 µs, where kinspect timed the same kernel at its own key at 4.2 µs" \
        in f.message
    assert _found(site, [replace(at_key, p80_us=21.0)]) == []  # within ×2: clocks, the benchmark's own overhead
    assert _found(site, [replace(at_key, p80_us=19.0)])
    assert _found(site, [replace(at_key, key=site.variants[0].key)]) == []  # another key: another problem
    assert _found(site) == []  # nothing measured: no evidence


def test_a_session_compiled_with_device_timing_is_held_to_it_without_offering_it_again():
    site = product_rows_site()
    v1 = site.variants[1]
    site = replace(site, variants=(site.variants[0], replace(v1, autotune=tuple(
        replace(r, time_us=40.0) for r in v1.autotune)), site.variants[2]))
    at_key = [Measurement(site.name, v1.key, 1, "cupti", 4.0, p80_us=4.2, samples=50)]
    (f,) = _found(site, at_key, config={"autotune_device_time": True})
    assert "--autotune-device-time" not in f.message and f.message.endswith("ranked on it)")
