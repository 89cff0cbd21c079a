"""What patches or reads Inductor while it compiles and runs: the compile capture, the
dispatch recorder, benchmark tensors at a hint, where a GEMM came from, the compile
caches, kernel facts, repeated layers compiled once, configs precompiled in-process, and
`fixes`, kinspect's fixes of Inductor's hint tuning.

Each hook only records, or, where an option asks, changes what Inductor does for the
compiles it wraps. Imports nothing of `kinspect.inductor` outside this package.
"""
