"""The small-plane col2im (src/gemm/im2col.inc: cc_col2im_small_) and its
row kernels (src/igemm/ig_c2i.inc: the pairs of a stride-2 row, c2ip, and
row adds, radd), which transposed convolutions and grad_input run through
the ``gemm_transpose`` backend where the output plane is small (lines of at
most 16, planes of at most 4096 padded elements).

Output rows shorter and longer than a vector (the kernels run where a
row's pairs fill one, the scalar set's plain loops below that), stride 2
with even and odd kernel widths (a last unpaired tap), strides 1 and 3,
dilation, padding, output padding, 1-D to 3-D, groups, bias, float32 and
float64, every instruction set this CPU runs, 1 and 2 threads: against the
float64 reference of tests/reference.py, the same bits at 1 and 2 threads,
and non-finite inputs only where they reach."""
from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import _depthwise

from isa_switch import forced_isa
from reference import (assert_close, reduction_length, ref_conv_grad_input,
                       ref_conv_transpose)

ISAS = _depthwise.available_isas()

# (x shape, w shape (c_in, c_out / groups, *k), stride, padding,
#  output_padding, dilation, groups): transposed convolutions whose output
# planes go through the small-plane col2im
T_CASES = [
    ((8, 24, 8, 8), (24, 16, 4, 4), 2, 1, 0, 1, 1),      # DCGAN-like: 16 pairs a row
    ((3, 16, 4, 4), (16, 8, 4, 4), 2, 1, 0, 1, 1),       # 4 pairs a row: the plain loops
    ((2, 16, 7, 7), (16, 12, 3, 3), 2, 1, 1, 1, 1),      # odd width: a last unpaired tap
    ((2, 10, 5, 6), (10, 6, 5, 5), 2, 2, 1, 1, 2),       # groups, 6 pairs, unpaired tap
    ((2, 12, 6, 3), (12, 9, 2, 4), 2, 0, 0, 1, 1),       # 3 pairs a row
    ((2, 8, 5, 12), (8, 6, 4, 4), 2, 1, 0, 1, 1),        # 12 pairs: 1.5 float32 vectors
    ((2, 8, 4, 13), (8, 6, 4, 3), 2, 1, 1, 1, 1),        # 13 pairs, an unpaired tap
    ((2, 8, 3, 9), (8, 6, 2, 2), 2, 0, 0, 1, 1),         # 9 pairs
    ((1, 8, 3, 9, 7), (8, 5, 3, 3, 2), 2, 1, 1, 1, 1),   # 3-D: depth planes
    ((2, 9, 16), (9, 7, 6), 2, 2, 1, 1, 1),              # 1-D
    ((2, 11, 9, 14), (11, 7, 3, 3), 1, 1, 0, 1, 1),      # stride 1: row adds
    ((2, 11, 5, 5), (11, 7, 3, 3), 3, 1, 2, 1, 1),       # stride 3: element by element
    ((2, 11, 6, 6), (11, 7, 3, 3), 1, 2, 0, 2, 1),       # dilation 2, stride 1
    ((2, 11, 6, 5), (11, 7, 3, 2), 2, 1, 1, 2, 1),       # dilation 2, stride 2: no pairs
]


def _case_arrays(case, dtype, seed):
    xs, ws, s, p, op, d, g = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[1] * g).astype(dtype)
    return x, w, b


def _tconv(x, w, b, case):
    _, _, s, p, op, d, g = case
    f = {3: cconv.conv_transpose1d, 4: cconv.conv_transpose2d, 5: cconv.conv_transpose3d}[x.ndim]
    return f(x, w, b, stride=s, padding=p, output_padding=op, dilation=d, groups=g,
             backend="gemm_transpose")


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(T_CASES)))
def test_transposed_small_planes(isa, dtype, case, restore_threads):
    c = T_CASES[case]
    x, w, b = _case_arrays(c, dtype, 11 + case)
    _, _, s, p, op, d, g = c
    ref = ref_conv_transpose(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                             stride=s, padding=p, output_padding=op, groups=g, dilation=d)
    red = reduction_length(w.shape[0] // g, 1, w.shape[2:])
    with forced_isa(isa):
        outs = []
        for t in (1, 2):
            cconv.set_num_threads(t)
            outs.append(_tconv(x, w, b, c))
    assert outs[0].shape == ref.shape
    assert_close(outs[0], ref, dtype, red, what=f"{isa} case {case}")
    assert np.array_equal(outs[0], outs[1]), f"{isa} case {case}: 1 and 2 threads differ"


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grad_input_small_planes(isa, dtype, restore_threads):
    """grad_input of forward layers on small images through GEMM's adjoint
    (its columns added into x's planes: 14- and 8-wide rows, stride 2 and
    1)."""
    rng = np.random.default_rng(5)
    for xs, ws, s, p in [((4, 16, 14, 14), (24, 16, 3, 3), 2, 1),
                         ((3, 10, 8, 8), (12, 10, 4, 4), 2, 1),
                         ((2, 6, 13, 9), (9, 6, 3, 3), 1, 1)]:
        x = rng.standard_normal(xs).astype(dtype)
        w = rng.standard_normal(ws).astype(dtype)
        y = cconv.conv2d(x, w, stride=s, padding=p)
        gy = rng.standard_normal(y.shape).astype(dtype)
        ref = ref_conv_grad_input(gy.astype(np.float64), w.astype(np.float64), xs,
                                  stride=s, pad_before=p)
        with forced_isa(isa):
            gi, _, _ = cconv.convolution_backward(gy, x, w, None, (s, s), (p, p), (1, 1), False,
                                                  (0, 0), 1, (True, False, False),
                                                  backend="gemm")
        assert_close(gi, ref, dtype, reduction_length(ws[0], 1, ws[2:]),
                     what=f"{isa} grad_input {xs}")


@pytest.mark.parametrize("isa", ISAS)
def test_nonfinite_reaches_only_its_outputs(isa, restore_threads):
    """A NaN and an inf in x reach only the outputs their taps cover."""
    c = T_CASES[0]
    x, w, b = _case_arrays(c, np.float32, 3)
    x[1, 2, 3, 4] = np.nan
    x[5, 0, 7, 0] = np.inf
    ref = ref_conv_transpose(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                             stride=2, padding=1)
    with forced_isa(isa):
        y = _tconv(x, w, b, c)
    assert np.array_equal(np.isnan(y), np.isnan(ref))
    assert np.array_equal(np.isposinf(y) | np.isneginf(y), np.isposinf(ref) | np.isneginf(ref))
    fin = np.isfinite(ref)
    assert_close(y[fin], ref[fin], np.float32, 24 * 16)
