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


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _no_tuned_winners_left():
    """Benchmark-mode winners outlive the test that tuned them, and while
    any exist every forward call skips the plan's short path: a test that
    tunes would silently move every later test in the process onto the
    slow path.  Drop them after each test."""
    yield
    try:
        from cconv import _autotune, _dispatch
    except ImportError:  # pragma: no cover - cconv not built
        return
    if _dispatch._tuned:
        _autotune.clear()


@pytest.fixture
def restore_threads():
    """The thread count of cconv's kernels put back after the test."""
    import cconv

    n = cconv.get_num_threads()
    yield
    cconv.set_num_threads(n)
