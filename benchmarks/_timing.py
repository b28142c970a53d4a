"""The process's CPU seconds (user + system, every thread), for the benchmark scripts beside this file."""

from __future__ import annotations

import resource


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
