"""A torchrun job's rank sessions side by side: per-step times, stragglers and compile
divergence between ranks.

May import `kinspect.core.errors`, `dispatch`, `session` and `quality` (a rank's regret is
the same regret the single-rank views show).
"""
