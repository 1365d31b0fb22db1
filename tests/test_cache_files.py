"""numba's on-disk cache of jitree's kernels: one set of files per version of the kernels."""

import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import numba

import jitree
from jitree.kernels import _jit

_SCRIPT = textwrap.dedent("""
    import numpy as np
    from jitree.kernels.random import mix64
    print(int(mix64(np.uint64(12345))))
""")


def _run(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    root = os.path.dirname(os.path.dirname(jitree.__file__))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_cache_files_carry_the_kernels_digest_and_ignore_other_versions(tmp_path):
    expected = _run(tmp_path)
    digest = _jit.source_digest()
    indexes = [os.path.join(folder, name) for folder, _, names in os.walk(tmp_path)
               for name in names if name.startswith("random.mix64-")]
    assert indexes and all(f"-{digest}." in path for path in indexes)
    # an index another version left under numba's own name for the function, naming a
    # module that does not exist here, is never read (numba would fail unpickling it)
    index = next(path for path in indexes if path.endswith(".nbi"))
    foreign = index.replace(f"-{digest}", "")
    with open(foreign, "wb") as file:
        pickle.dump(numba.__version__, file)
        file.write(b"cjitree_module_of_another_version\nRecord\n.")
    with open(foreign, "rb") as file:
        pickle.load(file)
        try:
            pickle.loads(file.read())
        except ModuleNotFoundError:
            pass
        else:
            raise AssertionError("the foreign index should not unpickle")
    assert _run(tmp_path) == expected


def test_digest_follows_the_kernels_source(tmp_path, monkeypatch):
    copy = tmp_path / "kernels"
    shutil.copytree(_jit._KERNELS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_jit, "_KERNELS", str(copy))
    _jit.source_digest.cache_clear()
    try:
        same = _jit.source_digest()
        with open(copy / "random.py", "a") as source:
            source.write("\n# another version\n")
        _jit.source_digest.cache_clear()
        changed = _jit.source_digest()
    finally:
        monkeypatch.undo()
        _jit.source_digest.cache_clear()
    assert same == _jit.source_digest()
    assert changed != same
