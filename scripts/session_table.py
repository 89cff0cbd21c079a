"""Print a short table of recorded sessions: sites, variants, dispatches, findings, regret."""

import sys

from kinspect.core.explain import explain_site
from kinspect.core.sessionfile.files import load
from kinspect.core.shapes import FullKey, format_key

for path in sys.argv[1:]:
    s = load(path)
    print(f"{path}: {s.environment.gpu}, torch {s.environment.torch}, {len(s.sites)} sites, "
          f"{len(s.events)} dispatches, {len(s.findings)} findings, peaks {dict(s.environment.peaks)}")
    for site in s.sites:
        kernels = " ".join(f"v{v.index}:{v.kernel_name}" for v in site.variants)
        print(f"  {site.name} {site.op} {kernels}")
        for key in sorted({m.key for m in s.measurements if m.site == site.name}):
            e = explain_site(s, site, FullKey(key))
            times = " ".join(
                f"v{i}={m.median_us:.1f}" if m.median_us else f"v{i}=err" for i, m in sorted((e.measured or {}).items())
            )
            regret = f"{e.regret:.2f}" if e.regret else "-"
            print(f"    {format_key(key)}: picked v{e.decision.chosen}, us {times}, regret {regret}")
