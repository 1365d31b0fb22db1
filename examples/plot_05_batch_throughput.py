"""
Batch prediction throughput
===========================

Prediction walks each row from the root to its leaf, in parallel over chunks of rows, on a
flat layout of the tree whose two children are adjacent (the next node is
``left + (x > threshold)``, without a branch). This example measures rows per second for a
full-depth tree as the number of rows grows, in memory and from a memory-mapped ``.npy``
file with :func:`jitree.batch.predict_file` (memory bounded by the chunk), and how the chunk
size matters for the file.

The figures are those of the machine that built this page, with every core it has.
"""

import os
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np

import jitree
import jitree.batch
from jitree.datasets import make_classification_data

X, y = make_classification_data(50_000, 10, seed=0)
clf = jitree.DecisionTreeClassifier().fit(X, y)
print(f"a tree of {clf.tree_.node_count} nodes, depth {clf.get_depth()}")
rows = np.random.default_rng(1).normal(size=(2_000_000, 10)).astype(np.float32)


def best_rate(function, n_rows, repeat=3):
    function()  # warm-up
    best = min(_timed(function) for _ in range(repeat))
    return n_rows / best / 1e6


def _timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


counts = [10_000, 100_000, 1_000_000, 2_000_000]
in_memory = [best_rate(lambda n=n: clf.predict(rows[:n]), n) for n in counts]
for n, rate in zip(counts, in_memory, strict=True):
    print(f"{n:>9} rows in memory: {rate:6.1f} M rows/s")

# %%
# From a file
# -----------
# The same 2 million rows saved as ``.npy`` and predicted chunk by chunk into another
# ``.npy`` file.
folder = tempfile.mkdtemp()
source = os.path.join(folder, "rows.npy")
target = os.path.join(folder, "labels.npy")
np.save(source, rows)
chunks = [50_000, 200_000, 1_000_000]
from_file = [best_rate(lambda c=c: jitree.batch.predict_file(clf, source, out=target,
                                                            chunk_rows=c), len(rows))
             for c in chunks]
for c, rate in zip(chunks, from_file, strict=True):
    print(f"file, chunks of {c:>9} rows: {rate:6.1f} M rows/s")
assert np.array_equal(np.load(target), clf.predict(rows))

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.semilogx(counts, in_memory, marker="o")
left.set_xlabel("rows predicted in one call")
left.set_ylabel("million rows per second")
left.set_title("In memory")
left.set_ylim(bottom=0)
right.bar([f"{c:,}" for c in chunks], from_file, color="tab:orange")
right.axhline(in_memory[-1], color="tab:blue", linestyle="--", label="in memory, 2M rows")
right.set_xlabel("chunk_rows")
right.set_title("predict_file: .npy to .npy, 2M rows")
right.set_ylim(0, 1.3 * max(from_file + in_memory))
right.legend(loc="upper left")
fig.tight_layout()
os.remove(source)
os.remove(target)
os.rmdir(folder)
