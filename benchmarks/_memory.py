"""Peak resident memory of the running process, as the benchmarks report it (Linux)."""

from __future__ import annotations


def status_mb(field: str) -> float:
    """A memory field of ``/proc/self/status`` (``VmRSS``: resident now, ``VmHWM``: peak), in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    raise KeyError(field)


def reset_peak_rss() -> None:
    """Restart the peak-RSS counter (Linux >= 4.0), so that the peak read next is the measured
    step's own."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
