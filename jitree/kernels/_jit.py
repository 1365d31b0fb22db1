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
import types as types_

import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba.core import caching, cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")

jit = functools.partial(numba.njit, **_OPTIONS)
pjit = functools.partial(numba.njit, parallel=True, **_OPTIONS)


def serial_twin(kernel):
    """The :func:`pjit` ``kernel`` compiled without ``parallel``: its prange loops run as
    plain loops in the calling thread. Growth calls the twin when numba's thread count is 1
    (a forest grows each tree on one thread), and prediction for a call of a few rows
    (``predict_flat_serial``, see :data:`jitree.model.tree.FEW_ROWS`): each call of a
    parallel kernel is a launch through the threading layer, about 1 us, 2.7 us while
    another thread launches too, and a tree of a few thousand samples makes a hundred. The
    twin is a function of its own
    (name ``<kernel>_serial``), so its on-disk cache files are its own."""
    func = kernel.py_func
    twin = types_.FunctionType(func.__code__, func.__globals__, func.__name__ + "_serial",
                               func.__defaults__, func.__closure__)
    twin.__qualname__ = func.__qualname__ + "_serial"
    twin.__module__ = func.__module__
    twin.__doc__ = func.__doc__
    return jit(twin)


@jit(inline="always")
def one_block(n_blocks):
    """Whether a growth of ``n_blocks`` blocks of parallel work (``GrowSettings.n_blocks``)
    runs on one thread: the builder gives it 1 block then (8 a thread otherwise), and it
    calls its kernels' :func:`serial_twin`. (``numba.get_num_threads()`` in compiled code
    would keep the growth out of the on-disk cache.)"""
    return n_blocks == 1


# kernels that only borrow arrays (they make, return and keep none; numba refuses to compile
# one that makes an array): compiled without reference counting. Every array a kernel reads
# from a record is otherwise counted up on entry and down on exit, two atomic operations
# each; a threshold scan reads a dozen, and the scans run once per (node, feature) pair
borrowing = functools.partial(numba.njit, _nrt=False, **_OPTIONS)


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the processor to bring ``array[index]`` (a 1-D array, an index within it) into
    its caches ahead of a read: a hint, with no effect on any result. For passes that
    read scattered rows of an X larger than the caches, a few samples ahead."""
    if not isinstance(array, types.Array) or array.ndim != 1 \
            or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        values = context.make_array(array_type)(context, builder, args[0])
        position = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, values, [position],
                                           wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        function = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_pointer],
            ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]))
        # a read (0), kept in every cache level (3), of data (1)
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3),
                                i32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


# the passes that read rows scattered through an array ask for the row this many positions
# ahead (prefetch): the sample-order growth's passes over X, the presorted threshold scans'
# weights and targets
AHEAD = np.uint64(16)


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


@intrinsic
def float_of_bits(typingctx, bits):
    """The float whose bits are ``bits`` (a uint32: a float32; a uint64: a float64), no
    conversion: one register move."""
    if not isinstance(bits, types.Integer) or bits.bitwidth not in (32, 64):
        return None
    result = types.float32 if bits.bitwidth == 32 else types.float64

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(result))

    return result(bits), codegen


@intrinsic
def retyped(typingctx, array, like):
    """``array`` under the type of ``like``, which has its dtype, dimensions and layout:
    the same array, no copy. Gives an array made in compiled code the flags of the one it
    replaces in a record (read-only, say), so that the record keeps its type and the code
    that reads it is compiled once."""
    if not (isinstance(array, types.Array) and isinstance(like, types.Array)
            and array.ndim == like.ndim and array.dtype == like.dtype
            and array.layout == like.layout):
        return None

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])

    return like(array, like), codegen


# -- compress stores: a block of 16 values, the ones a mask keeps, stored side by side ---------
# Processors with AVX-512 pack them in one instruction (vpcompress); elsewhere LLVM makes a
# branch of each lane, slower than a scalar loop, so the kernels that use them
# (jitree.kernels.grow's partitions) take them only when COMPRESS says the processor has
# them. The on-disk cache is the processor's own (numba keys it on the CPU's name and
# features), so code compiled either way is not read on the other kind of processor.
COMPRESS_LANES = 16
# The values are packed in a register and stored under a mask of as many lanes as were kept
# (REGISTER_COMPRESS, LLVM 19 on), not packed by the store itself (vpcompress with a memory
# operand): on AMD's Zen 4 that form is microcoded (a random forest classifier's fit, 10
# trees, 150k x 20, 2 threads: 1.88-1.94 s with it, 0.88-1.08 s without the blocks, 0.78-0.90
# s with the register form; see the performance guide). A register holds 512 bits: 64-bit
# values go in two halves of 8.
REGISTER_COMPRESS = llvm_binding.llvm_version_info >= (19,)
_REGISTER_BITS = 512


def _has_compress():
    """Whether the code numba compiles here runs on a processor with AVX-512: the host's, so
    not when NUMBA_CPU_NAME or NUMBA_CPU_FEATURES ask for code of another (a portable
    cache)."""
    if numba.config.CPU_NAME not in (None, "host") or numba.config.CPU_FEATURES is not None:
        return False
    try:
        features = llvm_binding.get_host_cpu_features()
    except RuntimeError:
        return False
    return bool(features.get("avx512f")) and bool(features.get("avx512vl"))


COMPRESS = _has_compress()


def _store_packed(builder, values, keep, pointer, suffix):
    """LLVM IR: the lanes of the vector ``values`` whose bit of the i1 vector ``keep`` is
    set, stored side by side from ``pointer`` (nothing else is written); returns their
    count (i32). ``suffix``: the lanes' type in intrinsic names (i32, f64, ...). Packed in a
    register (llvm.experimental.vector.compress) and stored under a mask of as many lanes,
    or, without REGISTER_COMPRESS, packed by the store (llvm.masked.compressstore)."""
    vector, n_lanes = values.type, values.type.count
    i1_lanes, i32_lanes = ir.VectorType(ir.IntType(1), n_lanes), ir.VectorType(ir.IntType(32),
                                                                             n_lanes)
    count = builder.zext(builder.call(builder.module.declare_intrinsic(
        "llvm.ctpop", [ir.IntType(n_lanes)]), [builder.bitcast(keep, ir.IntType(n_lanes))]),
        ir.IntType(32))
    if not REGISTER_COMPRESS:
        pointer = builder.bitcast(pointer, vector.element.as_pointer())  # to the first lane
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [vector, pointer.type, i1_lanes]),
            f"llvm.masked.compressstore.v{n_lanes}{suffix}")
        builder.call(function, [values, pointer, keep])
        return count
    compress = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vector, [vector, i1_lanes, vector]),
        f"llvm.experimental.vector.compress.v{n_lanes}{suffix}")
    packed = builder.call(compress, [values, keep, ir.Constant(vector, ir.Undefined)])
    counts = builder.shuffle_vector(
        builder.insert_element(ir.Constant(i32_lanes, ir.Undefined), count,
                               ir.Constant(ir.IntType(32), 0)),
        ir.Constant(i32_lanes, ir.Undefined), ir.Constant(i32_lanes, [0] * n_lanes))
    first = builder.icmp_unsigned("<", ir.Constant(i32_lanes, list(range(n_lanes))), counts)
    store = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [vector, pointer.type, ir.IntType(32),
                                                        i1_lanes]),
        f"llvm.masked.store.v{n_lanes}{suffix}.p0")
    align = int(suffix[1:]) // 8  # a lane's bytes
    builder.call(store, [packed, pointer, ir.Constant(ir.IntType(32), align), first])
    return count


@intrinsic
def compress_store(typingctx, target, at, source, start, mask):
    """Store the values ``source[start + b]``, b < COMPRESS_LANES, whose bit b of ``mask`` is
    set, side by side in their order from ``target[at]`` on (two 1-D C arrays of one
    dtype; nothing is checked: every position read and written must be in its array).
    The COMPRESS_LANES values are read before any is stored, so ``target`` may be
    ``source`` with ``at`` at most ``start``."""
    if not (isinstance(target, types.Array) and isinstance(source, types.Array)
            and target.ndim == source.ndim == 1 and target.dtype == source.dtype
            and target.layout == source.layout == "C"
            and all(isinstance(value, types.Integer) for value in (at, start, mask))):
        return None

    def codegen(context, builder, signature, args):
        target_type, at_type, source_type, start_type, mask_type = signature.args
        into = context.make_array(target_type)(context, builder, args[0])
        read = context.make_array(source_type)(context, builder, args[2])
        at_value = context.cast(builder, args[1], at_type, types.intp)
        start_value = context.cast(builder, args[3], start_type, types.intp)
        mask_value = context.cast(builder, args[4], mask_type, types.uint64)
        element = context.get_data_type(source_type.dtype)
        width = source_type.dtype.bitwidth
        # the intrinsics' names carry the lanes' type: v16i32, v8f64, ...
        suffix = ("f" if isinstance(source_type.dtype, types.Float) else "i") + str(width)
        # in parts of one register each (64-bit values in the register form: two of 8),
        # every part read before any is stored
        n_lanes = min(COMPRESS_LANES, _REGISTER_BITS // width) if REGISTER_COMPRESS \
            else COMPRESS_LANES
        vector = ir.VectorType(element, n_lanes)
        parts = [builder.load(builder.bitcast(
            builder.gep(read.data, [builder.add(start_value, ir.Constant(start_value.type,
                                                                         first))]),
            vector.as_pointer()), align=width // 8)
            for first in range(0, COMPRESS_LANES, n_lanes)]
        position = at_value
        for index, values in enumerate(parts):
            keep = builder.bitcast(builder.trunc(
                builder.lshr(mask_value, ir.Constant(mask_value.type, index * n_lanes)),
                ir.IntType(n_lanes)), ir.VectorType(ir.IntType(1), n_lanes))
            pointer = builder.bitcast(builder.gep(into.data, [position]), vector.as_pointer())
            count = _store_packed(builder, values, keep, pointer, suffix)
            position = builder.add(position, builder.zext(count, position.type))
        return context.get_dummy_value()

    return types.void(target, at, source, start, mask), codegen


@intrinsic
def popcount(typingctx, value):
    """The number of set bits of ``value`` (a uint64), as a uint64."""
    if not (isinstance(value, types.Integer) and value.bitwidth == 64):
        return None

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        function = builder.module.declare_intrinsic("llvm.ctpop", [i64])
        return builder.call(function, [args[0]])

    return types.uint64(value), codegen
