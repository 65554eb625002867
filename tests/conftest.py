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

# The tests check the default choices: a tuning file of the user's must not
# change them (tests/test_tuning.py points processes at files of its own).
os.environ["CCONV_TUNE_FILE"] = ""
# Nor the winners measured on this kind of CPU that ship with cconv
# (tests/test_kind.py checks those tables and turns one on where it tests it).
os.environ["CCONV_KIND_DEFAULTS"] = "0"


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _no_tuned_winners_left():
    """Measured winners (benchmark mode, cconv.tune) outlive the test that
    measured them and would change later tests' choices: drop them after
    each test."""
    yield
    try:
        from cconv import _autotune, _dispatch
    except ImportError:  # pragma: no cover - cconv not built
        return
    if _dispatch._tuned:
        _autotune.clear()
    if _dispatch._tuning:
        _dispatch.set_tuning({})
    if _dispatch._kind_defaults:
        _dispatch.set_kind_defaults({})


@pytest.fixture
def restore_threads():
    """The thread count of cconv's kernels put back after the test."""
    import cconv

    n = cconv.get_num_threads()
    yield
    cconv.set_num_threads(n)
