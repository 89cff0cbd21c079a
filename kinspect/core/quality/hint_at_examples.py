"""`hint-at-examples`: a hint whose variants one graph tuned at the sizes Dynamo traced.

Under `--one-size-per-symbol` each hint's sizes are the hint for every symbol, rounded or
halved where the graph could not run there, with the fewest symbols held at their example
sizes where it could run at none of those, and where holding gets no symbol off its example
either, the graph's example sizes. Then at every site of that graph the hint's variant is tuned and
keyed at the example, not near the hint the user asked for, and Inductor runs it wherever
the example is nearest: the shapes another hint was meant for as likely as its own (GPT-2's
backward graph at hint 23, before alignment guards were rounded for, tuned 256 rows as hint
16 did, and its key tied with hint 32's at 1,024 rows, where Inductor ran it as the first). Explain's "tuned at" line has
the sizes; this says it where a user looks first, with what the variant ran.
"""

from __future__ import annotations

from collections import Counter

from kinspect.core.quality.rules import session_rule
from kinspect.core.session.eventlog import pick_counts
from kinspect.core.session.model import Finding, Session


@session_rule("hint-at-examples")
def hints_at_examples(session: Session) -> list[Finding]:
    out = []
    for g in session.graphs:
        fell = [a for a in g.hint_sizes if a.at_examples]
        if not fell:
            continue
        sites = [s for s in session.sites if s.graph == g.name]
        ran = _dispatches_by_hint(session, {s.name for s in sites})
        for a in fell:
            n = sum(1 for s in sites if any(v.hint == a.hint for v in s.variants))
            runs = (f": it ran {ran[a.hint]} of the graph's {sum(ran.values())} dispatches" if ran[a.hint]
                    else ", and no dispatch ran it" if ran else "")
            out.append(Finding(
                "hint-at-examples",
                f"hint {a.hint}'s variant at the graph's {n} site{'s' if n != 1 else ''} was tuned and keyed at "
                f"the graph's example sizes ({a.sizes_text(session.aliases)}), not at {a.hint}: {a.why_at_examples}; Inductor "
                f"runs it wherever those sizes are nearest{runs}",
                "warning", graph=g.name))
    return out


def _dispatches_by_hint(session: Session, sites: set[str]) -> Counter[int]:
    """How many recorded dispatches at these sites ran each hint's variant."""
    hint_of = {(s.name, v.index): v.hint for s in session.sites if s.name in sites for v in s.variants}
    out: Counter[int] = Counter()
    for (site, _, picked), n in pick_counts(session.events).items():
        hint = hint_of.get((site, picked))
        if hint is not None:
            out[hint] += n
    return out
