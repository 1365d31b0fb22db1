"""Counter-based random numbers: a value depends only on (seed, node, feature), never on
which thread asks or in which order, so random splits and feature draws are the same for
every ``n_jobs``."""

import numpy as np

from ._jit import jit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)


@jit
def mix64(value):
    """SplitMix64 finaliser: a bijective scramble of a uint64."""
    z = value + _GOLDEN
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@jit
def stream_key(seed, node, feature):
    """Key of the random stream of (seed, node, feature)."""
    return mix64(mix64(mix64(np.uint64(seed)) ^ np.uint64(node)) ^ np.uint64(feature + 1))


@jit
def uniform(key, counter):
    """The ``counter``-th draw in [0, 1) of stream ``key``."""
    bits = mix64(key ^ mix64(np.uint64(counter)))
    return np.float64(bits >> _S11) * (1.0 / 9007199254740992.0)
