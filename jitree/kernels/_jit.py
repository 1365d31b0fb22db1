"""The one jit decorator of the package.

Every kernel is compiled through :func:`jit` (serial), :func:`pjit` (``prange`` inside) or
:func:`borrowing` (serial, no reference counting), so that on-disk caching, GIL release and the
error model are the same for all of them.

- ``cache=True``: the machine code is written next to the module and reused by later processes
  (file names carry a digest of the kernels' source: see :func:`source_digest`).
- ``nogil=True``: kernels run while other Python threads go on (concurrent ``predict``).
- ``error_model="numpy"``: no Python exception checks on division; kernels guard their own
  divisors, and the numpy model lets the loops vectorise.
- no ``fastmath``: split scores must be exactly reproducible (ties, agreement with references).
"""

import functools
import hashlib
import os

import numba
from numba.core import caching

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")

jit = functools.partial(numba.njit, **_OPTIONS)
pjit = functools.partial(numba.njit, parallel=True, **_OPTIONS)
# kernels that only borrow arrays (they make, return and keep none; numba refuses to compile
# one that makes an array): compiled without reference counting. Every array a kernel reads
# from a record is otherwise counted up on entry and down on exit, two atomic operations
# each; a threshold scan reads a dozen, and the scans run once per (node, feature) pair
borrowing = functools.partial(numba.njit, _nrt=False, **_OPTIONS)

# -- the on-disk cache: one set of files per version of the kernels ----------------------------
# numba names a function's cache files by module, name and line, and reads an index file
# (unpickling the argument types it lists) before it compares the source's stamp: after an
# upgrade or a downgrade of jitree in place, an index written by another version can name
# records of a module that no longer exists, and every fit then fails with
# ModuleNotFoundError. jitree's cache files carry a digest of the kernels' source in their
# name instead, so each version reads only its own.

_KERNELS = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def source_digest():
    """A digest of the kernel modules' source (the names of jitree's cache files)."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(_KERNELS)):
        if name.endswith(".py"):
            digest.update(name.encode())
            with open(os.path.join(_KERNELS, name), "rb") as source:
                digest.update(source.read())
    return digest.hexdigest()[:12]


class _VersionedLocator:
    """Mixed into numba's cache locators: jitree's kernels only, their files named with
    :func:`source_digest`."""

    def get_disambiguator(self):
        return f"{super().get_disambiguator()}-{source_digest()}"

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) != _KERNELS:
            return None
        return super().from_function(py_func, py_file)


def _version_the_cache():
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, name, None) or getattr(caching, "_" + name, None)
             for name in names]
    locators = getattr(impl, "_locator_classes", None)
    if not isinstance(locators, list) or None in bases:
        return  # another numba layout: its own cache naming applies
    if any(issubclass(locator, _VersionedLocator) for locator in locators):
        return
    locators[:0] = [type(f"Jitree{base.__name__.lstrip('_')}", (_VersionedLocator, base), {})
                    for base in bases]


_version_the_cache()
