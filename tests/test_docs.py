"""The documentation is part of the product: its API reference lists every public name, and
the code shown in README.md and in the user guide runs.

The guide's ``.. code-block:: python`` blocks and ``>>>`` doctest blocks run in page order in
one namespace per page (in a temporary directory); the ``$`` lines of its
``.. code-block:: console`` blocks run as commands. Blocks that cannot run in a test are
marked where they stand, with the reason:
``<!-- not run: REASON -->`` on the line before a README block, ``.. not run: REASON`` (an
RST comment, invisible on the page) before a guide block.
"""

import doctest
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import jitree

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api.rst"
GUIDE_PAGES = sorted((DOCS / "user_guide").glob("*.rst"))

# The public surface, module by module. jitree's and jitree.dask's own ``__all__`` are read
# from the modules; the other modules have none, so their public names are listed here (the
# API page says the rest is internal).
PUBLIC = {
    "jitree.measures": ["impurity", "split_gain"],
    "jitree.datasets": ["load_iris", "make_classification_data", "make_regression_data"],
    "jitree.batch": ["predict_file", "predict_chunks"],
    "jitree.cli": ["main", "build_parser"],
    # compiled kernels meant for users' own @njit code
    "jitree.kernels.predict": ["leaf_of_row", "leaf_of_row_any"],
    "jitree.kernels.shap": ["shap_row", "shap_interaction_row", "new_work"],
    "jitree.kernels.criteria": ["gini", "entropy", "misclassification", "squared_error"],
    "jitree.kernels.records": ["TreeWalk", "ShapTrees"],
}


def documented_names(text):
    """``module.name`` of every entry of the autosummary tables and ``.. data::``
    directives of an RST page, each under the ``.. currentmodule::`` in force."""
    names = set()
    module = None
    in_table = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(".. currentmodule::"):
            module = stripped.split("::", 1)[1].strip()
            in_table = False
        elif stripped.startswith(".. autosummary::"):
            in_table = True
        elif stripped.startswith(".. data::"):
            names.add(f"{module}.{stripped.split('::', 1)[1].strip()}")
        elif in_table:
            if line and not line[0].isspace():
                in_table = False
            elif stripped and not stripped.startswith(":"):
                names.add(f"{module}.{stripped}")
    return names


def public_names():
    names = {f"jitree.{name}" for name in jitree.__all__}
    dask_module = importlib.import_module("jitree.dask")  # the test extra installs dask
    names |= {f"jitree.dask.{name}" for name in dask_module.__all__}
    for module, members in PUBLIC.items():
        imported = importlib.import_module(module)
        for name in members:
            assert hasattr(imported, name), f"{module} has no {name}: update PUBLIC"
            names.add(f"{module}.{name}")
    return names


def test_api_reference_lists_every_public_name():
    missing = public_names() - documented_names(API.read_text())
    assert not missing, f"not in docs/api.rst: {sorted(missing)}"


def test_public_functions_of_listed_modules_are_documented():
    # a new public function in jitree.datasets or jitree.measures must reach the reference
    documented = documented_names(API.read_text())
    for module in ("jitree.datasets", "jitree.measures"):
        imported = importlib.import_module(module)
        for name, value in vars(imported).items():
            if (callable(value) and not name.startswith("_")
                    and getattr(value, "__module__", None) == module):
                assert f"{module}.{name}" in documented, f"{module}.{name} not in api.rst"


def test_gallery_examples_compile_and_have_a_title():
    # the docs build runs them; here only what a broken file would break: syntax, the title
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 10
    for path in examples:
        source = path.read_text()
        compile(source, str(path), "exec")
        lines = source.split(chr(34) * 3, 2)[1].strip().splitlines()
        assert len(lines) >= 2 and set(lines[1]) == {"="}, f"{path.name}: no title"
        assert "matplotlib" in source, f"{path.name}: a gallery example draws a figure"


# -- runnable code of the README and the user guide ------------------------------------------

def readme_blocks():
    """(line, code, reason not to run or None) of each ```python block of README.md."""
    lines = (ROOT / "README.md").read_text().splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            previous = lines[i - 1].strip() if i else ""
            match = re.fullmatch(r"<!-- not run: (.+) -->", previous)
            end = lines.index("```", i + 1)
            blocks.append((i + 1, "\n".join(lines[i + 1:end]), match and match.group(1)))
            i = end
        i += 1
    return blocks


def rst_blocks(path):
    """(line, kind, code, reason not to run or None) of each runnable block of an RST page,
    in page order: ``.. code-block:: python`` directives (kind "code"), doctest blocks,
    ``>>>`` paragraphs (kind "doctest"), and ``.. code-block:: console`` directives (kind
    "shell": their ``$`` lines are commands). A ``.. not run: REASON`` comment just before a
    block (blank lines between allowed) marks it."""
    lines = path.read_text().splitlines()
    blocks = []
    reason = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if stripped.startswith(".. not run:"):
            reason = stripped.split(":", 1)[1].strip()
        elif stripped in (".. code-block:: python", ".. code-block:: console"):
            kind = "code" if stripped.endswith("python") else "shell"
            start = i + 1
            while start < len(lines) and (not lines[start].strip()
                                          or lines[start].strip().startswith(":")):
                start += 1
            end = start
            while end < len(lines) and (not lines[end].strip() or
                                        len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            body = [text for text in lines[start:end]]
            code_indent = min(len(t) - len(t.lstrip()) for t in body if t.strip())
            code = "\n".join(t[code_indent:] for t in body).strip("\n")
            blocks.append((start + 1, kind, code, reason))
            reason = None
            i = end
            continue
        elif stripped.startswith(">>>"):
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            code = "\n".join(t[indent:] for t in lines[i:end])
            blocks.append((i + 1, "doctest", code, reason))
            reason = None
            i = end
            continue
        elif stripped:
            reason = None  # a mark applies to the next block only
        i += 1
    return blocks


def run_commands(block, where):
    """Run the ``$ `` lines of a console block (the other lines are their output, shown to
    the reader and not compared: it holds timings) with this environment's ``jitree``."""
    environment = {**os.environ, "PATH": os.pathsep.join(
        [str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    for command in block.splitlines():
        if command.startswith("$ "):
            done = subprocess.run(command[2:], shell=True, env=environment,  # noqa: S602
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{where}: {command!r} failed:\n{done.stderr}"


def run_blocks(blocks, source, namespace):
    parser = doctest.DocTestParser()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed = []
    for line, kind, code, reason in blocks:
        if reason is not None:
            continue
        if kind == "code":
            exec(compile(code, f"{source}:{line}", "exec"), namespace)  # noqa: S102
            continue
        if kind == "shell":
            run_commands(code, f"{source}:{line}")
            continue
        test = parser.get_doctest(code, namespace, f"{source}:{line}", str(source), line - 1)
        runner = doctest.DocTestRunner(optionflags=flags)
        runner.run(test, clear_globs=False)
        namespace.update(test.globs)
        if runner.failures:
            failed.append(line)
    assert not failed, f"{source}: doctests failed at lines {failed} (output above)"


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run page code in an empty directory: what it saves lands there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_python_blocks_run(in_tmp):
    blocks = readme_blocks()
    assert len(blocks) >= 3
    for line, _, reason in blocks:
        if reason is not None:
            assert len(reason) > 10, f"README.md:{line}: say why the block does not run"
    run_blocks([(line, "code", code, reason) for line, code, reason in blocks],
               "README.md", {"__name__": "__readme__"})


def test_guide_pages_have_code():
    assert len(GUIDE_PAGES) >= 10
    for page in GUIDE_PAGES:
        if page.name != "index.rst":
            assert rst_blocks(page), f"{page.name}: no worked example"


@pytest.mark.parametrize("page", GUIDE_PAGES, ids=lambda page: page.stem)
def test_guide_code_runs(page, in_tmp):
    import matplotlib

    matplotlib.use("Agg")
    os.environ.setdefault("MPLBACKEND", "Agg")
    run_blocks(rst_blocks(page), page.relative_to(ROOT), {"__name__": f"__{page.stem}__"})
