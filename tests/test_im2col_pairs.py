"""im2col's small planes at column stride 2 (src/gemm/im2col.inc,
cc_im2col_small_): with dilation 1 the taps t2 and t2 + 1 of the innermost
dimension read the even and odd places of the same pairs of a padded line,
and are split into their two rows together by the instruction set's row
kernel (rows2) where a line's pairs fill a vector; shorter lines, and the
last tap of an odd kernel width, take the element loop.

Fixed and random geometries on both sides of that (line pairs shorter and
longer than a vector, odd and even widths, dilation 2 and stride 3 without
pairs, padding, 1-D to 3-D, groups), through the forward and the weight
gradient of plain layers (GEMM) and the weight gradient of transposed ones
(GEMM_TRANSPOSE, whose im2col reads grad_output), float32 and float64,
every instruction set this CPU runs: against tests/reference.py's float64
convolution, the same bits at 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import _depthwise

from isa_switch import forced_isa
from reference import (assert_close, reduction_length, ref_conv, ref_conv_grad_weight,
                       ref_conv_transpose_grad_weight)

ISAS = _depthwise.available_isas()

# (x shape, w shape (c_out, c_in / groups, *k), stride, padding, dilation,
#  groups) of plain layers whose output lines are at most 16 long
CASES = [
    ((4, 16, 16, 16), (8, 16, 4, 4), 2, 1, 1, 1),    # 8 pairs a line: one float32 vector
    ((3, 8, 8, 8), (6, 8, 4, 4), 2, 1, 1, 1),        # 4 pairs: the element loop
    ((2, 6, 14, 14), (5, 6, 7, 7), 2, 3, 1, 1),      # odd width: a last unpaired tap
    ((2, 8, 31, 29), (6, 4, 3, 5), 2, 2, 1, 2),      # groups, 15 pairs, unpaired tap
    ((2, 5, 9, 32), (4, 5, 2, 2), 2, 0, 1, 1),       # 16 pairs, k2: pairs only
    ((1, 4, 5, 9, 12), (3, 4, 3, 3, 4), 2, 1, 1, 1), # 3-D
    ((3, 5, 30), (4, 5, 6), 2, 2, 1, 1),             # 1-D
    ((2, 6, 12, 12), (5, 6, 3, 3), 2, 1, 2, 1),      # dilation 2: no pairs
    ((2, 6, 20, 20), (5, 6, 3, 4), 3, 1, 1, 1),      # stride 3: no pairs
]


def _arrays(xs, ws, seed, dtype):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)


def _check_plain(x, w, s, p, d, g, isa, what):
    nsp = x.ndim - 2
    f = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}[nsp]
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    ref = ref_conv(x64, w64, stride=s, pad_before=p, dilation=d, groups=g)
    gy = np.random.default_rng(7).standard_normal(ref.shape).astype(x.dtype)
    ref_gw = ref_conv_grad_weight(x64, gy.astype(np.float64), w.shape, stride=s, pad_before=p,
                                  dilation=d, groups=g)
    outs = []
    with forced_isa(isa):
        for t in (1, 2):
            cconv.set_num_threads(t)
            y = f(x, w, stride=s, padding=p, dilation=d, groups=g, backend="gemm")
            _, gw, _ = cconv.convolution_backward(gy, x, w, None, [s] * nsp, [p] * nsp,
                                                  [d] * nsp, False, [0] * nsp, g,
                                                  [False, True, False], backend="gemm")
            outs.append((y, gw))
    red = reduction_length(w.shape[1], 1, w.shape[2:])
    assert_close(outs[0][0], ref, x.dtype, red, what=f"{what} forward")
    red_w = ref.shape[0] * int(np.prod(ref.shape[2:]))  # images x output positions
    assert_close(outs[0][1], ref_gw, x.dtype, red_w, what=f"{what} grad_weight")
    for a, b in zip(outs[0], outs[1]):
        assert np.array_equal(a, b), f"{what}: 1 and 2 threads differ"


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_plain_small_planes(isa, dtype, case, restore_threads):
    xs, ws, s, p, d, g = CASES[case]
    x, w = _arrays(xs, ws, 40 + case, dtype)
    _check_plain(x, w, s, p, d, g, isa, f"{isa} case {case}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(6))
def test_random_small_planes(dtype, seed, restore_threads):
    """Random stride-2 layers on small planes (output lines up to 16)."""
    rng = np.random.default_rng(900 + seed)
    for _ in range(4):
        nsp = int(rng.integers(1, 4))
        g = int(rng.choice([1, 1, 2]))
        cin, cout = g * int(rng.integers(1, 5)), g * int(rng.integers(1, 5))
        k = [int(rng.integers(1, 8)) for _ in range(nsp)]
        d = int(rng.choice([1, 1, 1, 2]))
        p = int(rng.integers(0, 3))
        lows = [max(1, (kk - 1) * d + 1 - 2 * p) for kk in k]
        size = [int(rng.integers(lo, max(lo + 1, 33 if i == nsp - 1 else 12)))
                for i, lo in enumerate(lows)]
        xs = (int(rng.integers(1, 4)), cin) + tuple(size)
        ws = (cout, cin // g) + tuple(k)
        x, w = _arrays(xs, ws, int(rng.integers(1 << 30)), dtype)
        _check_plain(x, w, 2, p, d, g, ISAS[-1], f"seed {seed} {xs} {ws} p{p} d{d} g{g}")


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transposed_grad_weight(isa, dtype, restore_threads):
    """grad_weight of transposed layers (DCGAN's 4x4 stride 2, a 7x7 one
    with an unpaired tap, 1-D): im2col reads grad_output's planes."""
    for i, (xs, ws, s, p, op) in enumerate([((4, 32, 8, 8), (32, 16, 4, 4), 2, 1, 0),
                                            ((2, 8, 7, 7), (8, 5, 7, 7), 2, 3, 1),
                                            ((3, 6, 9), (6, 4, 4), 2, 1, 1)]):
        x, w = _arrays(xs, ws, 70 + i, dtype)
        nsp = x.ndim - 2
        f = {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d}[nsp]
        y = f(x, w, stride=s, padding=p, output_padding=op)
        gy = np.random.default_rng(i).standard_normal(y.shape).astype(dtype)
        ref = ref_conv_transpose_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape,
                                             stride=s, padding=p, output_padding=op)
        outs = []
        with forced_isa(isa):
            for t in (1, 2):
                cconv.set_num_threads(t)
                outs.append(cconv.convolution_backward(
                    gy, x, w, None, [s] * nsp, [p] * nsp, [1] * nsp, True, [op] * nsp, 1,
                    [False, True, False], backend="gemm_transpose")[1])
        red = xs[0] * int(np.prod(xs[2:]))
        assert_close(outs[0], ref, dtype, red, what=f"{isa} transposed {xs} {ws}")
        assert np.array_equal(outs[0], outs[1]), f"{isa} transposed {xs}: 1 and 2 threads differ"
