"""A record of the methods the compiled kernels ran, for tests.

While ``events`` is a list (``recording()``), every kernel wrapper appends
``(kind, method)`` after its C call returns: kind 'fwd', 'adj' or 'wgrad'
(the plain convolution's forward, adjoint or weight gradient, see
src/cconv.h) and the method's name.  None (the default) records nothing.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

__all__ = ["events", "recording"]

events: list[tuple[str, str]] | None = None


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[str, str]]]:
    """Record the kernel calls made inside the block into the list it yields."""
    global events
    old = events
    events = []
    try:
        yield events
    finally:
        events = old
