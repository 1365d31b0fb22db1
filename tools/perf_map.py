"""Name jitree's compiled kernels for ``perf``.

numba loads its machine code into anonymous memory, so ``perf report`` shows addresses where
the kernels run. Called in the process being profiled (after its kernels have compiled or
loaded), :func:`write_perf_map` writes ``/tmp/perf-<pid>.map``, which ``perf report`` reads:
each function of each compiled kernel (its callees that were not inlined included) with its
address and size. Sizes come from the object code numba keeps in its cache files (``.nbc``:
an ELF object, listed by binutils' ``nm``), addresses from the loaded code.

Usage, the kernels cached first (run the workload once)::

    NUMBA_CACHE_DIR=/tmp/nbcache python my_workload.py            # compiles, caches
    NUMBA_CACHE_DIR=/tmp/nbcache perf record -F 999 -g -o perf.data \\
        python -c "import my_workload_and_then_write_perf_map"
    perf report -i perf.data --no-children --sort symbol

where the profiled script calls ``tools.perf_map.write_perf_map()`` once its kernels are
loaded (before or after the timed work: the map is read by ``perf report``).
"""

import glob
import os
import subprocess
import sys
import tempfile

import numba
from numba.core.registry import CPUDispatcher

_ELF = b"\x7fELF"


def _elf_objects(blob):
    """The ELF objects inside a cache file's bytes (each sized by its section headers,
    which end it)."""
    start = blob.find(_ELF)
    while start >= 0:
        header = blob[start:start + 64]
        shoff = int.from_bytes(header[0x28:0x30], "little")
        shentsize = int.from_bytes(header[0x3A:0x3C], "little")
        shnum = int.from_bytes(header[0x3C:0x3E], "little")
        end = start + shoff + shentsize * shnum
        yield blob[start:end]
        start = blob.find(_ELF, end)


def _symbol_sizes(cache_dir):
    """{symbol: size} of the functions in every object of the ``.nbc`` files under
    ``cache_dir``."""
    sizes = {}
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "object.o")
        for name in glob.glob(os.path.join(cache_dir, "**", "*.nbc"), recursive=True):
            with open(name, "rb") as cache_file:
                blob = cache_file.read()
            for obj in _elf_objects(blob):
                with open(path, "wb") as out:
                    out.write(obj)
                listing = subprocess.run(["nm", "-S", "--defined-only", path],
                                         capture_output=True, text=True).stdout
                for line in listing.splitlines():
                    parts = line.split()
                    if len(parts) == 4 and parts[2] in "Tt":
                        sizes[parts[3]] = int(parts[1], 16)
    return sizes


def _libraries():
    """The code libraries of every compiled overload of jitree's kernels."""
    seen = {}
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("jitree"):
            continue
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher):
                for cres in value.overloads.values():
                    seen[id(cres.library)] = cres.library
    return list(seen.values())


def _short(symbol):
    """A readable name from numba's mangled one: its module path and function, no types."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts = []
    i = 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        size = int(symbol[i:j])
        parts.append(symbol[j:j + size])
        i = j + size
    return ".".join(parts) or symbol


def write_perf_map(cache_dir=None):
    """Write ``/tmp/perf-<pid>.map`` for the kernels this process has loaded; returns its
    path and the number of functions named. ``cache_dir``: numba's cache directory
    (default: ``NUMBA_CACHE_DIR``, which must then be set)."""
    cache_dir = cache_dir or numba.config.CACHE_DIR
    if not cache_dir:
        raise ValueError("set NUMBA_CACHE_DIR (or pass cache_dir): the sizes are read from "
                         "the cache files")
    sizes = _symbol_sizes(cache_dir)
    lines = {}
    for library in _libraries():
        for symbol, size in sizes.items():
            try:
                address = library.get_pointer_to_function(symbol)
            except Exception:  # not in this library
                continue
            if address:
                lines[address] = f"{address:x} {size:x} {_short(symbol)}"
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as out:
        out.write("\n".join(lines[a] for a in sorted(lines)) + "\n")
    return path, len(lines)
