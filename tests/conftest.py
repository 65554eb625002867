"""Shared pytest setup for cconv's tests.

pytest runs with ``--import-mode=importlib`` and tests/ is no package, so the
helper module ``reference.py`` beside this file is made importable by putting
this folder (and only this folder, never the repository root) on sys.path.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
