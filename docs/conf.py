"""Sphinx configuration of the smartboost documentation.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (``pip install -e ".[docs]"``).
Pages are markdown (MyST); the API reference is generated from the numpydoc docstrings.
"""

import os
import sys

# document this checkout's package, whether or not it is installed
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))

project = "smartboost"
author = "smartboost developers"
copyright = "smartboost developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# markdown: $...$ math, heading anchors for links such as boosting.md#the-boosting-loop
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# API reference: the signatures without type hints (the docstrings carry the types)
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = "smartboost"
smartquotes = False  # keep "--option" and quotes as written
