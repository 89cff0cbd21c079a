"""Inductor's output code read as text: the wrapper module it writes for each graph (the
lines that run a multi-kernel, its definitions, its kernels' sources, the sizes its lines
state and every GEMM it runs).

Pure text, so what it finds holds for a wrapper read from a live compile, a saved
recording or a trace alike. May import `kinspect.core.errors` only.
"""
