"""Sphinx configuration of cconv's documentation (API reference from the
docstrings, the porting guide, installation).  Build it from an environment
where cconv is installed (autodoc imports the installed package):

    pip install '.[docs]' && sphinx-build -W -b html docs docs/_build/html
"""
import cconv

project = "cconv"
author = "the cconv developers"
copyright = "2026, the cconv developers"
release = cconv.__version__
version = ".".join(release.split(".")[:2])

extensions = ["sphinx.ext.autodoc", "numpydoc"]
exclude_patterns = ["_build", "*.md"]
templates_path: list = []
html_theme = "alabaster"
html_static_path: list = []

autodoc_typehints = "signature"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# the "See Also" names are resolved in cconv's namespace
numpydoc_xref_param_type = False
default_role = "obj"
