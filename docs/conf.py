"""Sphinx configuration for darray's documentation.

Build (from the repository root)::

    pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html

The build is offline-safe by default: intersphinx links to NumPy, Dask and
mpi4py are fetched only with ``DARRAY_DOCS_INTERSPHINX=1``.
Generated pages (API stubs, the Array API table, the gallery pages) go to
``docs/api/generated``, ``docs/_generated`` and ``docs/gallery`` and are
rebuilt every time. The build never runs the examples: the gallery shows the
pictures and output committed under ``docs/_static/gallery`` (made by
``python docs/_gallery.py``).
"""

from __future__ import annotations

import os
import posixpath
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

import darray

import _gen  # docs/_gen.py: the pages written from the code at build time

_gen.write_all(DOCS, ROOT)

# -- project -----------------------------------------------------------------
project = "darray"
author = "the darray developers"
copyright = "the darray developers"
release = darray.__version__
version = ".".join(release.split(".")[:2])

# -- extensions --------------------------------------------------------------
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.intersphinx",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# autodoc / autosummary / numpydoc
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False
autodoc_typehints = "none"            # signatures stay readable; types are in the docstrings
numpydoc_show_class_members = False   # autosummary lists members; avoids stub-less member tables
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = False
numpydoc_validation_checks: set = set()
add_module_names = False

# -- intersphinx: offline unless asked ---------------------------------------
# The CI machine reaches only PyPI, so no inventory is fetched by default:
# with an empty mapping, references to NumPy/Dask/mpi4py render as plain text.
_INTERSPHINX = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "dask": ("https://docs.dask.org/en/stable", None),
    "mpi4py": ("https://mpi4py.readthedocs.io/en/stable", None),
}
intersphinx_mapping = _INTERSPHINX if os.environ.get("DARRAY_DOCS_INTERSPHINX") == "1" else {}
intersphinx_timeout = 10

# -- HTML --------------------------------------------------------------------
html_theme = "furo"
html_title = f"darray {release}"
html_static_path: list[str] = []
html_show_sourcelink = False

# The sidebar lists the chapters, the reference pages and the API index with its submodules, not the ~800
# generated API pages (reached from the namespace page's tables). Sphinx resolves the whole toctree for every
# page it writes, which made the build quadratic in the number of pages (4 of its 4 minutes): a page that
# the bounded sidebar does not show gets the sidebar of its directory and parent, computed once.
SIDEBAR_DEPTH = 2
_sidebars: dict[tuple, str] = {}


def _sidebar_docs(env) -> tuple[set[str], dict[str, str]]:
    """The documents the bounded sidebar shows, and each document's parent in the toctree."""
    parents = {child: doc for doc, children in env.toctree_includes.items() for child in children}
    shown, level = {env.config.root_doc}, [env.config.root_doc]
    for _ in range(SIDEBAR_DEPTH):
        level = [child for doc in level for child in env.toctree_includes.get(doc, ())]
        shown.update(level)
    return shown, parents


def _bounded_sidebar(app, pagename, templatename, context, doctree) -> None:
    """Give the theme a ``toctree()`` bounded to :data:`SIDEBAR_DEPTH`, shared by the pages it does not show."""
    toctree = context.get("toctree")
    if toctree is None:
        return
    if not hasattr(app.env, "darray_sidebar_docs"):
        app.env.darray_sidebar_docs = _sidebar_docs(app.env)
    shown, parents = app.env.darray_sidebar_docs

    def bounded(**kwargs):
        if kwargs.get("maxdepth", -1) < 0:
            kwargs["maxdepth"] = SIDEBAR_DEPTH
        if pagename in shown or pagename not in parents:
            return toctree(**kwargs)
        key = (posixpath.dirname(pagename), parents[pagename], tuple(sorted(kwargs.items())))
        if key not in _sidebars:
            _sidebars[key] = toctree(**kwargs)
        return _sidebars[key]

    context["toctree"] = bounded


def setup(app) -> None:
    app.connect("html-page-context", _bounded_sidebar, priority=100)  # before furo's handler (priority 500)


# NumPy's own objects in darray's namespace (dtype, errstate, printoptions, SeedSequence, ...) are documented
# with NumPy's docstrings, whose :ref: and :doc: targets live in NumPy's manual, not here.
suppress_warnings = ["ref.ref", "ref.doc"]
