"""im2col's wide rows (src/gemm/im2col.inc, cc_im2col_wide_): where the
taps of the innermost dimension have dilation 1, a stride of 2 or more and
stay inside the input on every output of a line (patch embeddings, k2 s2
downsampling), the rows of those taps are filled together by transposing
each input line (the vector transpose from 4 taps, a plain loop below).

Random geometries on both sides of that condition (padding or dilation in
the innermost dimension turns it off; padding in the outer ones zeroes whole
lines of it), in 1-D, 2-D and 3-D, with groups, batches that share one GEMM
and single images cut into column tiles, through the forward (GEMM backend)
and the weight gradient (which builds the same rows), float32 and float64,
against tests/reference.py; and the image blocks that round their columns up
to whole vectors (gemm_plan.h) on batches around the rounding."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import cconv
from reference import (assert_close, ref_conv, ref_conv_grad_input, ref_conv_grad_weight,
                       reduction_length)


def _case(rng, nsp, wide):
    k = [int(rng.integers(1, 4)) for _ in range(nsp)]
    s = [int(rng.integers(1, 3)) for _ in range(nsp)]
    pad = [int(rng.integers(0, 2)) for _ in range(nsp)]
    dil = [1] * nsp
    k[-1] = int(rng.choice([2, 3, 4, 5, 8, 16]))
    s[-1] = int(rng.choice([k[-1], max(2, k[-1] - 1), k[-1] + 1]))
    if wide:
        pad[-1] = 0
    else:
        if rng.integers(2):
            pad[-1] = int(rng.integers(1, k[-1]))
        else:
            dil[-1] = 2
    size = []
    for d in range(nsp):
        span = (k[d] - 1) * dil[d] + 1
        n_out = int(rng.integers(1, 9 if d < nsp - 1 else 40))
        # a ragged end: the last input elements read by no tap
        size.append(max(1, (n_out - 1) * s[d] + span - 2 * pad[d])
                    + int(rng.integers(0, s[d])))
    groups = int(rng.choice([1, 1, 2, 3]))
    cin = groups * int(rng.integers(1, 4))
    cout = groups * int(rng.integers(1, 5))
    batch = int(rng.integers(1, 6))
    return batch, cin, cout, tuple(size), tuple(k), tuple(s), tuple(pad), tuple(dil), groups


FUNCS = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("wide", [True, False])
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_wide_rows_against_reference(seed, nsp, wide, dtype, restore_threads):
    rng = np.random.default_rng(zlib.crc32(f"im2col wide {seed} {nsp} {wide}".encode()))
    batch, cin, cout, size, k, s, pad, dil, groups = _case(rng, nsp, wide)
    x = rng.standard_normal((batch, cin, *size)).astype(dtype)
    w = rng.standard_normal((cout, cin // groups, *k)).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                   stride=s, pad_before=pad, dilation=dil, groups=groups)
    red = reduction_length(cin, groups, k)
    gy = rng.standard_normal(ref.shape).astype(dtype)
    ref_gw = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape,
                                  stride=s, pad_before=pad, dilation=dil, groups=groups)
    what = f"{batch}x{cin}x{size} k{k} s{s} p{pad} d{dil} g{groups}"
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        y = FUNCS[nsp](x, w, b, stride=s, padding=pad, dilation=dil, groups=groups,
                       backend="gemm")
        assert_close(y, ref, dtype, red, what=f"forward {what} T={nt}")
        _, gw, _ = cconv.convolution_backward(gy, x, w, [cout], s, pad, dil, False,
                                              [0] * nsp, groups, [False, True, False],
                                              backend="gemm")
        assert_close(gw, ref_gw, dtype, int(np.prod(ref.shape)) // cout,
                     what=f"grad_weight {what} T={nt}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wide_rows_of_a_tiled_image(dtype, restore_threads):
    """One large image: its columns are cut into tiles that start and end
    inside output lines, so a wide row begins mid-line."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 5, 3, 130, 4003)).astype(dtype)
    w = rng.standard_normal((6, 5, 1, 3, 4)).astype(dtype)
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), stride=(1, 2, 4),
                   pad_before=(0, 1, 0))
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        y = cconv.conv3d(x, w, stride=(1, 2, 4), padding=(0, 1, 0), backend="gemm")
        assert_close(y, ref, dtype, 5 * 12, what=f"T={nt}")


@pytest.mark.parametrize("batch", [1, 2, 3, 4, 5, 7, 8, 9])
def test_patch_blocks_rounded_to_whole_vectors(batch, restore_threads):
    """196 patches an image (not a multiple of 16): image blocks of the GEMM
    grow to make whole vectors of columns where the batch allows."""
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 3, 112, 112)).astype(np.float32)
    w = rng.standard_normal((40, 3, 8, 8)).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride=8)
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        y = cconv.conv2d(x, w, b, stride=8, backend="gemm")
        assert_close(y, ref, np.float32, 192, what=f"batch {batch} T={nt}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch, length", [(2, 900), (3, 1100), (4, 1000), (5, 1100), (7, 770),
                                           (5, 2046), (3, 2050)])
def test_mid_size_images_batched(batch, length, dtype, restore_threads):
    """Images of 384-1023 output columns share one GEMM up to 2048 columns
    (gemm_plan.h: CC_MID_COLS), blocks of equal size where the batch does
    not divide (5 x 549 columns: blocks of 3 and 2), and images of 1023 and
    1024 columns on either side of the limit: forward with bias, grad_input
    and grad_weight against the reference at 1 and 2 threads."""
    rng = np.random.default_rng(batch * 10007 + length)
    x = rng.standard_normal((batch, 24, length)).astype(dtype)
    w = rng.standard_normal((40, 24, 3)).astype(dtype)
    b = rng.standard_normal(40).astype(dtype)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    ref = ref_conv(x64, w64, b.astype(np.float64), stride=2)
    gy = rng.standard_normal(ref.shape).astype(dtype)
    ref_gx = ref_conv_grad_input(gy.astype(np.float64), w64, x.shape, stride=2)
    ref_gw = ref_conv_grad_weight(x64, gy.astype(np.float64), w.shape, stride=2)
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        y = cconv.conv1d(x, w, b, stride=2, backend="gemm")
        assert_close(y, ref, dtype, reduction_length(24, 1, (3,)), what=f"forward {batch}x{length} T={nt}")
        gx, gw, _ = cconv.convolution_backward(gy, x, w, None, 2, 0, 1, False, 0, 1,
                                               (True, True, False), backend="gemm")
        assert_close(gx, ref_gx, dtype, 40 * 3, what=f"grad_input {batch}x{length} T={nt}")
        assert_close(gw, ref_gw, dtype, batch * ref.shape[-1],
                     what=f"grad_weight {batch}x{length} T={nt}")


# (x shape, w shape, stride, padding): every form of the wide rows
FIXED = [
    ((2, 6, 1001), (4, 6, 2), 2, 0),                 # k2 s2: the pair loop
    ((1, 3, 5, 77), (5, 3, 3, 3), (1, 2), (1, 0)),   # k3 s2: the plain loop, zero lines
    ((2, 4, 9, 64), (4, 2, 2, 4), (2, 4), (1, 0)),   # k4 s4 (transpose), groups of 2
    ((1, 2, 4, 6, 90), (3, 2, 2, 1, 5), (1, 1, 6), (1, 0, 0)),  # k5 s6: 3-D, gaps
    ((3, 3, 32, 32), (7, 3, 16, 16), 16, 0),         # whole patches
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(FIXED)))
def test_wide_rows_fixed(case, dtype, restore_threads):
    xs, ws, s, pad = FIXED[case]
    rng = np.random.default_rng(zlib.crc32(f"wide fixed {case}".encode()))
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    groups = xs[1] // ws[1]
    nsp = len(xs) - 2
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), stride=s, pad_before=pad,
                   groups=groups)
    gy = rng.standard_normal(ref.shape).astype(dtype)
    ref_gw = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape,
                                  stride=s, pad_before=pad, groups=groups)
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        y = FUNCS[nsp](x, w, stride=s, padding=pad, groups=groups, backend="gemm")
        assert_close(y, ref, dtype, reduction_length(xs[1], groups, ws[2:]), what=f"T={nt}")
        _, gw, _ = cconv.convolution_backward(gy, x, w, None, s, pad, 1, False, 0, groups,
                                              [False, True, False], backend="gemm")
        assert_close(gw, ref_gw, dtype, int(np.prod(ref.shape)) // ws[0],
                     what=f"grad_weight T={nt}")


@pytest.mark.parametrize("case", ["multiplier", "complex", "channels_last"])
def test_wide_rows_other_inputs(case, restore_threads):
    """Depthwise weights with a channel multiplier of 2, complex data (real
    and imaginary parts through the same rows) and a channels-last input
    (made channels-first first) on k2 / k4 stride-2 and stride-4 taps."""
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    if case == "multiplier":
        x = rng.standard_normal((1, 69, 39, 39)).astype(np.float32)
        w = rng.standard_normal((138, 1, 2, 2)).astype(np.float32)
        s, groups = 2, 69
    elif case == "complex":
        x = (rng.standard_normal((2, 58, 36)) + 1j * rng.standard_normal((2, 58, 36))).astype(
            np.complex64)
        w = (rng.standard_normal((58, 1, 2)) + 1j * rng.standard_normal((58, 1, 2))).astype(
            np.complex64)
        s, groups = 2, 58
    else:
        x = np.moveaxis(rng.standard_normal((3, 39, 16)).astype(np.float32), 2, 1)
        w = rng.standard_normal((32, 1, 4)).astype(np.float32)
        s, groups = 4, 16
    ref = ref_conv(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                   w.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
                   stride=s, groups=groups)
    f = cconv.conv1d if x.ndim == 3 else cconv.conv2d
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        y = f(x, w, stride=s, groups=groups, backend="gemm")
        assert_close(y, ref, x.dtype, reduction_length(x.shape[1], groups, w.shape[2:]),
                     what=f"{case} T={nt}")
