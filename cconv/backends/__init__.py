"""One module per backend: ``supports(p, xp, need_backward)`` returns None or
the reason it cannot run ``p``; ``forward``, ``grad_input`` and
``grad_weight`` write into a preallocated result (see docs/internals.md)."""
