"""What the CUDA_* backends share: the CuPy check, the mapping of a
(plain or transposed) convolution onto the plain geometry's three
algorithms, and the backend API that runs them on the arrays' device.

Each backend's algorithms take the array module ``xp`` and the kernel front
``K`` (``cconv.cuda.kernels.Kernels``) explicitly, so the tests run them
with NumPy and the CPU harness of the same .cu sources; the ``*_with``
functions built here keep that form, the backend API fills in CuPy.
"""
from __future__ import annotations

from . import kernels as _cuda_kernels

__all__ = ["check_cuda", "plain_ops", "device_api"]


def check_cuda(xp, name: str) -> str | None:
    """None when ``xp`` is CuPy, else why a CUDA_* backend cannot run."""
    if not _cuda_kernels.is_cupy_module(xp):
        return (
            f"CUDA_* backends run cupy.ndarray inputs, but these are NumPy arrays "
            f"({name} needs CuPy and a CUDA device)"
        )
    return None


def plain_ops(fwd, adj, wgrad):
    """``(forward_with, grad_input_with, grad_weight_with)`` from the plain
    geometry's forward ``fwd(xp, K, geom, x, w, b, y)``, adjoint
    ``adj(xp, K, geom, gy, w, b, gx)`` and weight gradient
    ``wgrad(xp, K, geom, x, gy, gw)``.  ``p.geom()`` is always the plain
    convolution: a transposed convolution's forward is the plain adjoint,
    its grad_input the plain forward, and in its weight gradient the plain
    input is our grad_output, the plain output our input."""

    def forward_with(xp, K, p, x, w, b, out) -> None:
        (adj if p.transposed else fwd)(xp, K, p.geom(), x, w, b, out)

    def grad_input_with(xp, K, p, gy, w, out) -> None:
        (fwd if p.transposed else adj)(xp, K, p.geom(), gy, w, None, out)

    def grad_weight_with(xp, K, p, x, gy, out) -> None:
        if p.transposed:
            wgrad(xp, K, p.geom(), gy, x, out)
        else:
            wgrad(xp, K, p.geom(), x, gy, out)

    return forward_with, grad_input_with, grad_weight_with


def device_api(forward_with, grad_input_with, grad_weight_with):
    """The backend API ``(forward, grad_input, grad_weight)``: the ``*_with``
    functions run with CuPy and the compiled kernels, on the device that
    holds the first array."""

    def forward(p, x, w, b, out) -> None:
        xp, K = _cuda_kernels.context(x)
        with _cuda_kernels.on_device(x):
            forward_with(xp, K, p, x, w, b, out)

    def grad_input(p, gy, w, out) -> None:
        xp, K = _cuda_kernels.context(gy)
        with _cuda_kernels.on_device(gy):
            grad_input_with(xp, K, p, gy, w, out)

    def grad_weight(p, x, gy, out) -> None:
        xp, K = _cuda_kernels.context(x)
        with _cuda_kernels.on_device(x):
            grad_weight_with(xp, K, p, x, gy, out)

    return forward, grad_input, grad_weight
