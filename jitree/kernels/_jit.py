"""The one jit decorator of the package.

Every kernel is compiled through :func:`jit` (serial) or :func:`pjit` (``prange`` inside), so
that on-disk caching, GIL release and the error model are the same for all of them.

- ``cache=True``: the machine code is written next to the module and reused by later processes.
- ``nogil=True``: kernels run while other Python threads go on (concurrent ``predict``).
- ``error_model="numpy"``: no Python exception checks on division; kernels guard their own
  divisors, and the numpy model lets the loops vectorise.
- no ``fastmath``: split scores must be exactly reproducible (ties, agreement with references).
"""

import functools

import numba

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")

jit = functools.partial(numba.njit, **_OPTIONS)
pjit = functools.partial(numba.njit, parallel=True, **_OPTIONS)
