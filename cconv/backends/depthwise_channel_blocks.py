"""DEPTHWISE_CHANNEL_BLOCKS: the depthwise forward on channels-last blocks
(src/depthwise/dw_cl.c, path 'channels_last'): for channel multiplier 1,
blocks of channels of a channels-first input are transposed into small
channels-last buffers, convolved with vectors along the channels and
transposed back; it wins on small planes (dw_cl.c has the measurements).
The plain forward and a transposed convolution's grad_input only."""
from __future__ import annotations

from .._dispatch import Backend
from ._depthwise_path import path_backend

BACKEND = Backend.DEPTHWISE_CHANNEL_BLOCKS

supports, wanted, nonfinite, forward, grad_input, grad_weight = path_backend(
    "DEPTHWISE_CHANNEL_BLOCKS", "channels_last",
    "channel multiplier 1 with a block's planes within its buffers")
