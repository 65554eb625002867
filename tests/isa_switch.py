"""Forcing an instruction set in tests (not a test module)."""
from __future__ import annotations

import contextlib

from cconv import _kernels


@contextlib.contextmanager
def forced_isa(name):
    """Run the block on instruction set ``name``: the C core keeps one
    choice for every kernel family and every extension module, so one
    ``set_isa`` forces them all; the previous choice is restored afterwards."""
    prev = _kernels.set_isa(name)
    try:
        yield
    finally:
        _kernels.set_isa(prev)
