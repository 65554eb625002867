"""Forcing an instruction set in tests (not a test module)."""
from __future__ import annotations

import contextlib

from cconv import _depthwise, _kernels


@contextlib.contextmanager
def forced_isa(name):
    """Run the block on instruction set ``name``.  Each extension module
    has its own choice: _kernels' (the igemm and Winograd kernels and the
    rules that read their vector width) and _depthwise's are both forced,
    and both restored afterwards."""
    prev, prevk = _depthwise.isa(), _kernels.isa()
    _depthwise.set_isa(name)
    _kernels.set_isa(name)
    try:
        yield
    finally:
        _depthwise.set_isa(prev)
        _kernels.set_isa(prevk)
