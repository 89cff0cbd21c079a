"""A stand-in for a compiled Triton kernel: what Inductor's SizeHintMultiKernelCall needs of
one (a name in `inductor_meta` and `run`), for driving the real runtime class on a CPU."""

from __future__ import annotations


class StandIn:
    """`ran`, when given, gets the kernel's name each time it runs."""

    def __init__(self, name: str, ran: list[str] | None = None) -> None:
        self.inductor_meta = {"kernel_name": name}
        self._ran = ran

    def run(self, *args, **kwargs) -> None:
        if self._ran is not None:
            self._ran.append(self.inductor_meta["kernel_name"])
