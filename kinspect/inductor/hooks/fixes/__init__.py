"""kinspect's fixes of Inductor's hint tuning, each turned on by a compile switch and each
the runtime form of a patch under docs/upstream/: one size per symbol at each hint
(`hint_sizes`, with `graph_bounds` reading what a graph could run at), each hint's fused
choice among its own (`fusion_per_hint`), and Inductor's benchmarks timed by the GPU's work
alone (`device_time`); `modes` installs and counts them.
"""
