"""Sphinx configuration of jitree's documentation site.

Build it from the repository root with ``python -m sphinx -W -b html docs docs/_build/html``
(``pip install -e ".[docs]"`` first). The gallery's examples (``examples/``) are run during
the build by sphinx-gallery; their figures are drawn with matplotlib's Agg backend.
"""

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import jitree  # noqa: E402

project = "jitree"
author = "the jitree developers"
copyright = "the jitree developers"  # noqa: A001
version = release = jitree.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "cli_help",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.json"]
root_doc = "index"
default_role = "literal"  # `x` in the guide is code, as in the README
pygments_style = "sphinx"

# -- API reference: autosummary pages from the numpydoc docstrings -----------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False  # the class template lists the members itself
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- HTML ------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"jitree {release}"
html_static_path = ["_static"]
html_css_files = ["jitree.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": []}
html_show_sourcelink = False
# MathJax: Sphinx's default (loaded by the reader's browser from a CDN). For reading offline,
# point JITREE_DOCS_MATHJAX at a local copy, e.g. Debian's libjs-mathjax:
# JITREE_DOCS_MATHJAX="file:///usr/share/javascript/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML"
if os.environ.get("JITREE_DOCS_MATHJAX"):
    mathjax_path = os.environ["JITREE_DOCS_MATHJAX"]

# -- Gallery -----------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"/_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
    "plot_gallery": "True",
}
