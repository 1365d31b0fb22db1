"""Thread-safe numba threading layer and a scoped thread count.

Numba's default ``workqueue`` layer aborts when two Python threads run parallel kernels at
once, so jitree asks for a thread-safe layer (TBB, else OpenMP). The ``tbb`` wheel installs
``libtbb.so.12`` into ``<prefix>/lib``, which the dynamic loader does not search; loading it
by path first lets numba's TBB pool find it by soname.
"""

import contextlib
import ctypes
import os
import sys

import numba


def _preload_tbb():
    if not sys.platform.startswith("linux"):
        return
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        path = os.path.join(prefix, "lib", "libtbb.so.12")
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            return


def configure_threading_layer():
    """Select a thread-safe layer unless the user chose one through ``NUMBA_THREADING_LAYER``."""
    if "NUMBA_THREADING_LAYER" in os.environ:
        return
    _preload_tbb()
    numba.config.THREADING_LAYER = "threadsafe"


def resolve_n_jobs(n_jobs):
    """Number of threads for ``n_jobs`` (None or -1: all of numba's threads)."""
    limit = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return limit
    if isinstance(n_jobs, bool) or not hasattr(n_jobs, "__index__"):
        raise TypeError(f"n_jobs must be None or an int, got {n_jobs!r}")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 is not allowed; use None or -1 for all cores")
    if n_jobs < 0:
        return max(1, limit + 1 + n_jobs)
    return min(n_jobs, limit)


@contextlib.contextmanager
def n_threads(n_jobs):
    """Run the enclosed kernels on ``n_jobs`` threads, restoring the previous count after.

    numba's thread count is per calling thread, so concurrent callers do not disturb each other.
    An unchanged count is not set again (two calls of ``numba.set_num_threads``: 6-8 us, a
    tenth of a one-row prediction).
    """
    wanted = resolve_n_jobs(n_jobs)
    previous = numba.get_num_threads()
    if previous == wanted:
        yield wanted
        return
    numba.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        numba.set_num_threads(previous)
