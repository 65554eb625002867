"""DEPTHWISE_PLANE: the depthwise forward's plane kernels (src/depthwise,
path 'plane'): 3x3, 5x5 and 7x7 kernels of stride 1 or 2 and dilation 1,
and 3x3 kernels of stride 1 and dilation 2 or 4, across the planes of 2-D
and 3-D layers, several output rows per step.
The plain forward and a transposed convolution's grad_input only."""
from __future__ import annotations

from .._dispatch import Backend
from ._depthwise_path import path_backend

BACKEND = Backend.DEPTHWISE_PLANE

supports, wanted, nonfinite, forward, grad_input, grad_weight = path_backend(
    "DEPTHWISE_PLANE", "plane",
    "square 3x3, 5x5 or 7x7 kernels of stride 1 or 2 and dilation 1, or 3x3 of stride 1 and "
    "dilation 2 or 4, across the planes")
