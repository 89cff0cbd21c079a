"""Watching Inductor's `SizeHintMultiKernelCall` decide, call by call.

Every size-hint multi-kernel in a loaded wrapper is a `SizeHintMultiKernelCall`, created
when the wrapper module loads (cache hits included). The recorder wraps the class's
`__init__` so it sees every instance, then instruments each instance, not the class:

- `_get_cached_shape_choice` (called by `run` with the key Inductor computed) is replaced
  by a closure doing the same lookup in Inductor's own `_shape_cache`, which records a
  cache hit with the choice found there;
- `_cache_shape_choice` (called by `_select_kernel_by_shape` with its pick) stores the
  pick in `_shape_cache` as Inductor does and records a miss.

Both run before the kernel launches, so the stepping debugger can pause there and force
another variant (by returning it on a hit, or by setting `picked_kernel` after Inductor's
own pick is cached, so an override never pollutes Inductor's cache). `run` is untouched.

What is recorded is what Inductor's cache holds at that call: the recorder keeps no copy
of it to answer from, so a cache that is changed or cleared under it (by Inductor or a
user) is recorded as it is, a cleared key as the miss Inductor then takes.

A cache hit must cost next to nothing (benchmarks/recorder_overhead.py), so events are
stored as columns of machine integers: the id of a `DispatchRecord` (site, key, pick,
hit, override, wrapper line), shared with the crash-safe log, and a timestamp. Building a
Python object per dispatch would cost more than Inductor's own lookup once a recording
holds a million events.

A miss must cost little too, with no key foreseen (`kinspect run` records a program
whose sizes nobody knows beforehand): kinspect's prediction of the pick (its own model
of the heuristic, ~20 us of Python) is not made there. Events are stored without it, in
memory and in the log, and it is made when they are read, once per key.

Neither a hit nor a miss writes the crash-safe log: formatting a new key and its event
line cost a miss more than the rest of the recorder. The recorder is the log's feeder
(`LiveLog.feed`): the log's own thread writes the events recorded since it last asked,
every `FLUSH_S` seconds, before any other record and when the log closes.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path
import time
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kinspect.core.dispatch.decision import decide
from kinspect.core.errors import KinspectError
from kinspect.core.session.format.log import DispatchRecord, LiveLog
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.dispatch.shapes import Key
from kinspect.core.inductor_code.calls import dispatch_lines


@dataclass
class LiveSite:
    """One `SizeHintMultiKernelCall` instance as kinspect knows it at run time."""

    index: int
    name: str
    wrapper_file: str | None
    keys: tuple[Key | None, ...]
    call: Any
    predictions: dict[Key, int] = field(default_factory=dict)

    def predict(self, key: Key) -> int:
        p = self.predictions.get(key)
        if p is None:
            p = self.predictions[key] = decide(self.keys, key).chosen
        return p


Gate = Callable[[LiveSite, Key, bool], "int | None"]
"""Called before a dispatch launches: returns a variant to force, or None. It may block:
the stepping debugger pauses the model's thread here."""

Combo = tuple[int, Key, int, bool, "int | None", "int | None", None]
"""(site index, key, picked, cache hit, override, wrapper line, no prediction): a
dispatch's `DispatchRecord` as a plain tuple, which the hot path builds and looks up
(constructing the named tuple costs a miss half a microsecond; `tuple.__new__` makes one
from it in C)."""

_new_record = tuple.__new__


class _State:
    """What the per-instance closures read on every dispatch, in one place."""

    __slots__ = ("gate", "log", "on_event", "stepping")

    def __init__(self) -> None:
        self.gate: Gate | None = None
        self.log: LiveLog | None = None
        self.on_event: Callable[[int], None] | None = None
        self.stepping = False
        """A gate or a UI callback is set: every event takes the full path."""


class Recorder:
    """Install with `with Recorder() as rec:`; `rec.dispatch_events()` gives the events.

    `namer(call) -> str` gives each instance its session site name (the pipeline maps
    Inductor's per-graph `multi_kernel_N` to unique names); by default Inductor's name.
    """

    def __init__(self, namer: Callable[[Any], str] | None = None,
                 on_site: Callable[[LiveSite], None] | None = None) -> None:
        self.sites: list[LiveSite] = []
        self.combos: list[DispatchRecord] = []
        """Each distinct dispatch, by id: what the event columns and the log refer to."""
        self._combo_ids: dict[Combo, int] = {}
        self._ids = array("l")
        self._ts = array("q")
        self._steps: list[tuple[int, int | None]] = []
        self._logged = 0
        """How many events the log holds: those after it are written when it asks (`_feed`)."""
        self._state = _State()
        self._namer = namer
        self._on_site = on_site
        """Told of each instance attached, before it can dispatch (a recording of a whole
        program logs the site's record there, so a killed run's log still names it)."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    def expect(self, site: str, key: Key) -> None:
        """Predict `key` at every site named `site` now, before the model runs, so that
        reading the events only looks it up."""
        for ls in self.sites:
            if ls.name == site:
                ls.predict(key)

    @property
    def log(self) -> LiveLog | None:
        return self._state.log

    @property
    def current_step(self) -> int | None:
        return self._steps[-1][1] if self._steps else None

    def set_step(self, step: int | None) -> None:
        """Mark that the events from now on belong to workload step `step`."""
        self._steps.append((len(self._ids), step))
        if self._state.log is not None:
            self._state.log.record({"type": "step", "step": step})

    def configure(self, *, gate: Gate | None = None, log: LiveLog | None = None,
                  on_event: Callable[[int], None] | None = None) -> None:
        """Set the slow-path consumers: stepping gate, crash-safe log, UI callback. The
        log gets the events from now on; an earlier log gets those it was still owed."""
        s = self._state
        if log is not s.log:
            if s.log is not None:
                s.log.unfeed(self._feed)
            if log is not None:
                for site in self.sites:  # events name runtime sites: introduce those known
                    log.runtime_site(site.index, site.name)
                self._logged = len(self._ids)
                log.feed(self._feed)
        s.gate, s.log, s.on_event = gate, log, on_event
        s.stepping = gate is not None or on_event is not None

    def _feed(self, log: LiveLog) -> None:
        """Write the events recorded since the log last asked (the log holds its lock).
        An event's time is appended after its id, so those with a time are whole."""
        n = len(self._ts)
        if n > self._logged:
            start, self._logged = self._logged, n
            log.events(self._ids[start:n], self._ts[start:n], self.combos)

    def set_event_gate(self, gate: Callable[[DispatchEvent], "int | None"] | None) -> None:
        """Install a stepping gate that sees each decision as a DispatchEvent (the pick
        Inductor is about to make: its cached choice on a hit, the heuristic's on a miss),
        keeping the log; None removes it."""
        if gate is None:
            self.configure(log=self.log)
            return

        def before(site: LiveSite, key: Key, hit: bool) -> int | None:
            pred = site.predict(key)
            picked = site.call._shape_cache.get(key, pred)
            return gate(DispatchEvent(len(self), site.name, key, picked, pred, hit, self.current_step))

        self.configure(gate=before, log=self.log)

    # ------------------------------------------------------------ installation

    def __enter__(self) -> Recorder:
        _install()
        _stack().append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        stack = _stack()
        if self in stack:
            stack.remove(self)
        if self._state.log is not None:  # a run of the model ends with its events in the log
            self._state.log.flush()

    @contextlib.contextmanager
    def everywhere(self) -> Iterator[Recorder]:
        """Inside, instances created on any thread that has no recorder of its own attach
        here: a program under `kinspect run` may compile and load its graphs on any thread
        (a server's workers)."""
        global _everywhere
        _install()
        if _everywhere is not None:
            raise KinspectError("another recording of the whole process is active")
        _everywhere = self
        try:
            yield self
        finally:
            _everywhere = None

    # ------------------------------------------------------------ reading back

    @contextlib.contextmanager
    def unrecorded(self, forced: Mapping[str, tuple[Key, int]] | None = None) -> Iterator[None]:
        """Inside, the instrumented calls dispatch without recording: timing the whole model
        runs it hundreds of times, and those runs are not the workload's. A site in `forced`
        (its name: (key, variant)) runs that variant at that key (the oracle: the fastest
        forced); every other lookup reads Inductor's own shape cache, which is left as it
        was. A cache miss inside still records, through Inductor's `_cache_shape_choice`."""
        saved = {}
        for ls in self.sites:
            saved[ls.index] = ls.call._get_cached_shape_choice
            force = (forced or {}).get(ls.name)

            def lookup(cache_key: Key, _call: Any = ls.call, _force: tuple[Key, int] | None = force) -> int | None:
                if _force is not None and cache_key == _force[0]:
                    return _force[1]
                return _call._shape_cache.get(cache_key)

            ls.call._get_cached_shape_choice = lookup
        try:
            yield
        finally:
            for ls in self.sites:
                ls.call._get_cached_shape_choice = saved[ls.index]

    def dispatch_events(self, start: int = 0,
                        call_site: Callable[[str, int | None], int | None] | None = None) -> list[DispatchEvent]:
        """Events in the session model, timestamps relative to the first event;
        `call_site(site name, wrapper line)` names each event's call site."""
        t0 = self._ts[0] if self._ts else 0
        described = []
        for si, key, picked, hit, override, line, _ in self.combos:
            where = call_site(self.sites[si].name, line) if call_site is not None else None
            described.append((si, key, picked, self.sites[si].predict(key), hit, override, where))
        steps = iter(self._steps)
        nxt = next(steps, None)
        step = None
        out = []
        for seq in range(len(self._ids)):
            while nxt is not None and nxt[0] <= seq:
                step = nxt[1]
                nxt = next(steps, None)
            if seq < start:
                continue
            si, key, picked, pred, hit, override, where = described[self._ids[seq]]
            out.append(DispatchEvent(seq, self.sites[si].name, key, picked, pred, hit, step,
                                     self._ts[seq] - t0, override, where))
        return out

    # ------------------------------------------------------------ per instance

    def _combo_id(self, combo: Combo) -> int:
        cid = self._combo_ids.get(combo)
        if cid is None:
            with self._lock:
                cid = self._combo_ids.setdefault(combo, len(self.combos))
                if cid == len(self.combos):
                    self.combos.append(_new_record(DispatchRecord, combo))
        return cid

    def _miss_id(self, combo: Combo) -> int:
        """A new record for a miss: a key misses once per instance unless its cache is
        cleared, so looking the combination up (hashing the key twice more) would find
        nothing; a repeated miss just gets a record of its own."""
        with self._lock:
            self.combos.append(_new_record(DispatchRecord, combo))
            return len(self.combos) - 1

    def attach(self, call: Any, wrapper_file: str | None) -> LiveSite:
        """Instrument one instance; public so tests can attach hand-built instances."""
        with self._lock:
            name = self._namer(call) if self._namer else call.multi_kernel_name
            site = LiveSite(len(self.sites), name, wrapper_file, tuple(call._kernel_hints), call)
            self.sites.append(site)
            if self._state.log is not None:  # before any event that names it
                self._state.log.runtime_site(site.index, name)
        index = site.index
        state = self._state
        ids_append = self._ids.append
        ts_append = self._ts.append
        now = time.perf_counter_ns
        # (key, wrapper line) -> (the choice Inductor's cache held, combo id) at its last
        # hit: a repeated hit is one lookup here, checked against Inductor's cache, never
        # answered from here.
        hits: dict[tuple[Key, int | None], tuple[int, int]] = {}
        wrapper_file = site.wrapper_file
        getframe = sys._getframe
        lines, regions = _call_lines(wrapper_file, call.multi_kernel_name)
        only = lines[0] if len(lines) == 1 else None
        needs_frame = only is None and bool(lines)

        def caller_line(depth: int) -> int | None:
            """The line of the wrapper that called `run` (or, inside a nested compile region,
            called the region): which call site this is. A site the wrapper calls from one
            line needs no look at the stack (a frame object costs)."""
            if only is not None or not lines:
                return only
            frame = getframe(depth)
            for _ in range(6):
                if frame is None:
                    return None
                code = frame.f_code
                if code.co_filename == wrapper_file and code.co_name not in regions:
                    return frame.f_lineno
                frame = frame.f_back
            return None
        combo_id = self._combo_id
        miss_id = self._miss_id
        count = self._ids.__len__

        def record(key: Key, picked: int, hit: bool, line: int | None) -> int:
            gate = state.gate
            override = None if gate is None else gate(site, key, hit)
            if override is not None:
                picked = override
            combo = (index, key, picked, hit, override, line, None)
            cid = combo_id(combo) if hit else miss_id(combo)
            t = now()
            ids_append(cid)
            ts_append(t)
            if state.on_event is not None:
                state.on_event(count() - 1)
            return picked

        def _get_cached_shape_choice(cache_key: Key) -> int | None:
            choice = call._shape_cache.get(cache_key)
            if choice is None:
                return None  # a miss: recorded when Inductor caches its pick
            line = caller_line(2) if needs_frame else only  # run <- the wrapper's call
            if state.stepping:
                return record(cache_key, choice, True, line)
            seen = (cache_key, line) if needs_frame else cache_key
            known = hits.get(seen)
            if known is None or known[0] != choice:
                known = hits[seen] = (choice, combo_id((index, cache_key, choice, True, None, line, None)))
            cid = known[1]
            t = now()
            ids_append(cid)
            ts_append(t)
            return choice

        lock = self._lock
        records = self.combos
        records_append = records.append

        def _cache_shape_choice(cache_key: Key, kernel_idx: int) -> None:
            call._shape_cache[cache_key] = kernel_idx
            line = caller_line(3) if needs_frame else only  # _select_kernel_by_shape <- run <- wrapper
            if state.stepping:
                picked = record(cache_key, kernel_idx, False, line)
                if picked != kernel_idx:
                    call.picked_kernel = picked
                return
            # `record` and `_miss_id`, inlined: this is every miss's path
            with lock:
                records_append(_new_record(DispatchRecord, (index, cache_key, kernel_idx, False, None, line, None)))
                cid = len(records) - 1
            ids_append(cid)
            ts_append(now())

        call._get_cached_shape_choice = _get_cached_shape_choice
        call._cache_shape_choice = _cache_shape_choice
        if self._on_site is not None:
            self._on_site(site)
        return site


def _call_lines(wrapper_file: str | None, name: str) -> tuple[list[int], frozenset[str]]:
    """The wrapper's lines that run multi-kernel `name` (several when layers share it) and
    the nested compile regions it runs in (`kinspect.core.inductor_code.calls.dispatch_lines`)."""
    if wrapper_file is None:
        return [], frozenset()
    try:
        code = Path(wrapper_file).read_text()
    except (OSError, UnicodeDecodeError):
        return [], frozenset()
    lines, regions = dispatch_lines(code, name)
    return [n for n, _ in lines], regions


_KINSPECT = str(Path(__file__).resolve().parents[2])
"""kinspect's own package: no frame of it is a wrapper module."""


def loading_module_file() -> str | None:
    """The wrapper module whose top level is creating the instance under construction, if
    any: the first module on the stack that is neither Inductor's runtime nor kinspect's."""
    frame = sys._getframe(1)
    for _ in range(12):
        if frame is None:
            return None
        f = frame.f_globals.get("__file__")
        if f and "async_compile" not in f and "multi_kernel" not in f and not f.startswith(_KINSPECT):
            return f
        frame = frame.f_back
    return None


# ---------------------------------------------------------------- the hook
# One wrapper of SizeHintMultiKernelCall.__init__ per process, attaching each new instance
# to the recorder active on the creating thread (the one loading the wrapper module).
# Per-recorder save/restore of __init__ breaks when runs of two pipelines overlap.

_local = threading.local()
_install_lock = threading.Lock()
_installed = False
_everywhere: Recorder | None = None


def _stack() -> list[Recorder]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall

        orig_init = SizeHintMultiKernelCall.__init__

        def __init__(call: Any, *args: Any, **kwargs: Any) -> None:
            orig_init(call, *args, **kwargs)
            stack = getattr(_local, "stack", None)
            rec = stack[-1] if stack else _everywhere
            if rec is not None:
                rec.attach(call, loading_module_file())

        SizeHintMultiKernelCall.__init__ = __init__
        _installed = True
