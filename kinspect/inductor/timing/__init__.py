"""Latency: every variant of a site timed on a real call's arguments, a program's keys timed
after it ran, and the whole model timed at one shape (eager, static, exact hint, hinted,
oracle). May import `launch` and `hooks`.
"""
