"""What patches or reads Inductor while it compiles and runs: the compile capture, the
dispatch recorder, benchmark tensors at a hint, where a GEMM came from, the compile
caches, kernel facts, repeated layers compiled once, and configs precompiled in-process.

Each hook only records (or, where an option asks, changes one Inductor method for the
compile it wraps) and puts Inductor back when it ends. Imports nothing of `kinspect.inductor`
outside this package.
"""
