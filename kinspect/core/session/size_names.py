"""Names for a session's sizes where the user gave none, and the user's renames.

A model file names its sizes (`def inputs(B=1000)`); a program recorded by `kinspect run`
names none, and a table of `s27=17` asks the user to know Inductor's numbering. Dynamo
says where each size came from (`L['kwargs']['input_ids'].size()[1]`), so such a size is
named by that tensor and dim (`input_ids_1`), a name a user can type and read back.
`--name s27=S` (and the inspector's rename) gives any size the user's own name, wherever
the session holds sizes by name: the symbols, the workload, the sweeps, the baselines.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence

from kinspect.core.errors import KinspectError, echo
from kinspect.core.session.model import Session, SymbolInfo
from kinspect.core.session.runtime import Sweep

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIZE = re.compile(r"^(?P<base>.*?)(?:\['(?P<name>[^']*)'\]|\[(?P<pos>\d+)\])\.size\(\)\[(?P<dim>\d+)\]$")
_ARGS = re.compile(r"\['args'\]$|^L$")
_SCALAR = re.compile(r"^L(?:\['kwargs'\])?\['(?P<name>[^']*)'\]$|^L\['args'\]\[(?P<pos>\d+)\]$")


def source_name(symbol: SymbolInfo) -> str | None:
    """`input_ids_1` for a size Dynamo read off `input_ids`'s dim 1 (`arg0_1` for a
    positional argument, whether the session came from a recording or a trace, which
    calls that input `args[0]`); an int argument Dynamo made a symbol of by its own name
    (`logits_to_keep`, `arg2`), as an assignment at a hint lists it too; None where no
    source says which input it is."""
    if symbol.input and _NAME.fullmatch(symbol.input) and symbol.dim is not None:
        return _identifier(f"{symbol.input}_{symbol.dim}")
    for source in symbol.sources:
        m = _SIZE.match(source)
        if m is None:
            continue
        if m["name"] is not None:
            tensor = m["name"]
        elif _ARGS.search(m["base"]):
            tensor = f"arg{m['pos']}"
        else:
            inner = _SIZE.match(m["base"] + ".size()[0]")
            tensor = f"{inner['name'] if inner is not None and inner['name'] else 'arg'}{m['pos']}"
        return _identifier(f"{tensor}_{m['dim']}")
    for source in symbol.sources:
        m = _SCALAR.match(source)
        if m is not None:
            return _identifier(m["name"] if m["name"] is not None else f"arg{m['pos']}")
    return None


def _identifier(text: str) -> str | None:
    name = re.sub(r"\W", "_", text)
    return name if _NAME.fullmatch(name) else None


def with_source_names(symbols: Sequence[SymbolInfo]) -> list[SymbolInfo]:
    """The symbols, each without a name of the user's named from its source (a name taken
    already, by a user's name or Inductor's, gets `_` appended until it is not)."""
    taken = {s.name for s in symbols} | {s.alias for s in symbols if s.alias}
    out = []
    for s in symbols:
        name = None if s.alias else source_name(s)
        if name is not None:
            while name in taken:
                name += "_"
            taken.add(name)
            s = dataclasses.replace(s, alias=name)
        out.append(s)
    return out


def parse_names(texts: Iterable[str]) -> dict[str, str]:
    """`--name s27=S` (several allowed, or `s27=S,s52=B`): each size, by Inductor's name or
    its current one, to the name the user gives it."""
    out: dict[str, str] = {}
    for text in texts:
        for part in filter(None, (p.strip() for p in text.split(","))):
            old, eq, new = (x.strip() for x in part.partition("="))
            if not eq or not _NAME.fullmatch(old) or not _NAME.fullmatch(new):
                raise KinspectError(f"--name takes SIZE=NAME, such as s27=S (names are letters, digits and _), "
                                    f"not {echo(part)}")
            if old in out:
                raise KinspectError(f"--name renames {old} twice")
            out[old] = new
    return out


def rename(session: Session, names: Mapping[str, str]) -> None:
    """Give sizes the user's names (`names`: Inductor's name or the current one, to the new
    one), in the symbols and wherever the session holds sizes by name. Refused in one line
    where a size is unknown or two sizes would share a name."""
    if not names:
        return
    by = session.symbols_by_name()
    new_alias: dict[str, str] = {}
    for old, new in names.items():
        sym = by.get(old)
        if sym is None:
            known = ", ".join(f"{s.label} ({s.name})" if s.alias else s.name for s in session.symbols) or "none"
            raise KinspectError(f"{old}={new}: no size named {old}; this session has: {known}")
        new_alias[sym.name] = new
    labels = {s.name: new_alias.get(s.name, s.alias) for s in session.symbols}
    for s in session.symbols:
        clash = [o.name for o in session.symbols if o is not s and labels[s.name] in (o.name, labels[o.name])]
        if labels[s.name] and clash:
            raise KinspectError(f"{labels[s.name]} would name two sizes ({s.name} and {clash[0]})")
    moved = {s.alias: new_alias[s.name] for s in session.symbols if s.alias and s.name in new_alias}
    session.symbols = [dataclasses.replace(s, alias=new_alias.get(s.name, s.alias)) for s in session.symbols]
    if moved:
        _move_sizes(session, moved)
    session.forget_derived()


def _move_sizes(session: Session, moved: Mapping[str, str]) -> None:
    """Sizes the session holds by a user's name, under the name that replaces it."""
    def sizes(d: Mapping[str, int]) -> dict[str, int]:
        return {moved.get(k, k): v for k, v in d.items()}

    session.model = dataclasses.replace(session.model, workload=tuple(sizes(w) for w in session.model.workload))
    session.baselines = [dataclasses.replace(b, sizes=sizes(b.sizes)) for b in session.baselines]
    session.sweeps = [Sweep({moved.get(k, k): r for k, r in w.ranges.items()}, tuple(sizes(p) for p in w.points),
                            tuple((sizes(p), why) for p, why in w.skipped)) for w in session.sweeps]

