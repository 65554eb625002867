"""The weight gradient by shifted products (Backend.SHIFT, src/gemm/shift_conv.inc):
per tile, the input band transposed (a row of input channels per band
position) and, for every tap, outer products of its shifted rows with the
tile's gy values, on the instruction set's kernel (igemm.h: ukrs).

Checked against the float64 reference of tests/reference.py on random
stride-1 problems (1-D to 3-D, padding, dilation, groups, plain and
transposed, float32 and float64, 1 and 2 threads; channel counts that fill
whole vectors, leave ragged ones and pass several kernel calls), for
thread-count independence (the segments of the sum are fixed by the
problem), for strides (the kernel steps through the band by them), for the
NaN/inf pattern (every product is a term of the direct sum, so non-finite
inputs and gradients keep the method), and for the default rule (16-128
input channels per group; strided layers with 256 output positions per
image and more)."""
from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import Backend, _depthwise, _kernels, _trace
from isa_switch import forced_isa
from reference import ref_conv_grad_weight, ref_conv_transpose_grad_weight

TOL = {np.float32: 2e-6, np.float64: 1e-12}


def gw_of(gy, x, w, pad, dil, groups, transposed=False, backend=Backend.SHIFT):
    return cconv.convolution_backward(gy, x, w, None, 1, pad, dil, transposed, 0, groups,
                                      (False, True, False), backend=backend)[1]


def rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def _check_random(rng, nd, groups, cig, cog, size, dt, threads, strided=False):
    """One random problem of these channels and input size (random kernel,
    dilation and padding, and strides 1-3 when ``strided``): False when the
    kernel does not fit, else checked against the reference."""
    k = tuple(int(v) for v in rng.integers(1, 4, nd))
    st = tuple(int(v) for v in rng.integers(1, 4, nd)) if strided else (1,) * nd
    dil = tuple(int(v) for v in rng.integers(1, 3, nd))
    pad = tuple(int(v) for v in rng.integers(0, 3, nd))
    if any(s + 2 * p - d * (kk - 1) < 1 for s, p, d, kk in zip(size, pad, dil, k)):
        return False
    x = rng.standard_normal((int(rng.integers(1, 3)), cig * groups) + size).astype(dt)
    w = rng.standard_normal((cog * groups, cig) + k).astype(dt)
    y = getattr(cconv, f"conv{nd}d")(x, w, stride=st, padding=pad, dilation=dil, groups=groups)
    gy = rng.standard_normal(y.shape).astype(dt)
    cconv.set_num_threads(threads)
    got = cconv.convolution_backward(gy, x, w, None, st, pad, dil, False, 0, groups,
                                     (False, True, False), backend=Backend.SHIFT)[1]
    ref = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape, st, pad,
                               dilation=dil, groups=groups)
    assert got.shape == w.shape and got.dtype == dt
    assert rel(got, ref) <= TOL[dt], (x.shape, w.shape, st, pad, dil, groups, threads)
    return True


@pytest.mark.parametrize("seed", range(6))
def test_random_plain_problems_match_the_reference(seed, restore_threads):
    rng = np.random.default_rng(100 + seed)
    done = 0
    while done < 25:
        nd = int(rng.integers(1, 4))
        groups = int(rng.choice([1, 1, 2, 3]))
        cig, cog = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        size = tuple(int(v) for v in rng.integers(3, 13, nd))
        done += _check_random(rng, nd, groups, cig, cog, size, (np.float32, np.float64)[done % 2],
                              1 + done % 2)


@pytest.mark.parametrize("seed", range(3))
def test_random_wide_channel_problems_match_the_reference(seed, restore_threads):
    """Channel counts that fill whole vectors (16, 32, 64), leave ragged
    ones (17, 33, 70) or pass one kernel call's output channels (20, 100),
    output channels cut into chunks (300), and tiles of a piece of a long
    row (the band then built row by row)."""
    rng = np.random.default_rng(300 + seed)
    for i in range(10):
        nd = int(rng.integers(1, 4))
        groups = int(rng.choice([1, 1, 2]))
        cig = int(rng.choice([16, 17, 32, 33, 64, 70]))
        cog = int(rng.choice([1, 5, 20, 33, 100, 300])) if groups == 1 else int(rng.choice([3, 16, 20]))
        size = (tuple(int(v) for v in rng.integers(3, 7, nd)) if nd == 3 else
                tuple(int(v) for v in rng.integers(3, 14, nd)) if nd == 2 else
                (int(rng.choice([40, 1500])),))
        _check_random(rng, nd, groups, cig, cog, size, (np.float32, np.float64)[i % 2], 1 + i % 2)


@pytest.mark.parametrize("isa", _depthwise.available_isas())
def test_every_instruction_set_kernel_matches_the_reference(isa, restore_threads):
    """The kernel of each instruction set this CPU runs (the scalar one is
    the reference twin of the vector ones): whole and ragged vectors of
    input channels, 1-8 output channels per call and more, both types,
    whole rows and pieces of a long one."""
    rng = np.random.default_rng(400)
    cases = [((2, 16, 9, 11), (3, 16, 3, 3), 1, (1, 1), 1),
             ((1, 34, 7, 12), (22, 17, 3, 2), 2, (1, 0), (2, 1)),
             ((2, 70, 40), (9, 70, 5), 1, 2, 1),
             ((1, 32, 1100), (5, 32, 3), 1, 1, 2),  # pieces of a long row
             ((1, 40, 4, 5, 6), (14, 20, 2, 3, 3), 2, 1, 1)]
    with forced_isa(isa):
        for xs, ws, groups, pad, dil in cases:
            for dt in (np.float32, np.float64):
                x = rng.standard_normal(xs).astype(dt)
                w = rng.standard_normal(ws).astype(dt)
                f = getattr(cconv, f"conv{len(xs) - 2}d")
                gy = rng.standard_normal(f(x, w, padding=pad, dilation=dil, groups=groups).shape).astype(dt)
                for t in (1, 2):
                    cconv.set_num_threads(t)
                    got = gw_of(gy, x, w, pad, dil, groups)
                    ref = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape,
                                               1, pad, dilation=dil, groups=groups)
                    assert rel(got, ref) <= TOL[dt], (isa, xs, ws, dt, t)


@pytest.mark.parametrize("seed", range(3))
def test_random_transposed_problems_match_the_reference(seed):
    rng = np.random.default_rng(200 + seed)
    for i in range(20):
        nd = int(rng.integers(1, 4))
        groups = int(rng.choice([1, 2]))
        cin = groups * int(rng.integers(1, 5))
        k = tuple(int(v) for v in rng.integers(1, 4, nd))
        size = tuple(int(v) for v in rng.integers(5, 9, nd))
        pad = tuple(int(min(v, kk - 1)) for v, kk in zip(rng.integers(0, 3, nd), k))
        x = rng.standard_normal((2, cin) + size)
        w = rng.standard_normal((cin, int(rng.integers(1, 5))) + k)
        y = getattr(cconv, f"conv_transpose{nd}d")(x, w, padding=pad, groups=groups)
        gy = rng.standard_normal(y.shape)
        got = gw_of(gy, x, w, pad, 1, groups, transposed=True)
        ref = ref_conv_transpose_grad_weight(x, gy, w.shape, 1, pad, 0, groups)
        assert rel(got, ref) <= 1e-12


def test_layers_large_enough_for_segments_and_tiles(restore_threads):
    """Several tiles per image and several segments (partial sums), and
    the same bits at 1 and 2 threads."""
    rng = np.random.default_rng(9)
    for shape, wshape, pad in [((3, 32, 40, 40), (48, 32, 3, 3), 1),
                               ((2, 24, 6, 20, 20), (24, 24, 3, 3, 3), 1),
                               ((4, 16, 3000), (32, 16, 5), 2)]:
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal(wshape).astype(np.float32)
        f = getattr(cconv, f"conv{x.ndim - 2}d")
        gy = rng.standard_normal(f(x, w, padding=pad).shape).astype(np.float32)
        outs = []
        for t in (1, 2):
            cconv.set_num_threads(t)
            outs.append(gw_of(gy, x, w, pad, 1, 1))
        assert np.array_equal(outs[0], outs[1])
        ref = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape, 1, pad)
        assert rel(outs[0], ref) <= TOL[np.float32]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_nonfinite_input_keeps_the_shift(dt):
    """Only real output positions are visited: an infinity or a NaN in x
    meets the gy values the direct sum multiplies it by, and the padding
    zeros meet gy only where the reference's do."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 16, 9, 9))
    x[0, 1, 3, 4] = np.inf
    x[1, 2, 0, 8] = np.nan
    x[1, 5, 8, 0] = -np.inf
    w = rng.standard_normal((16, 16, 3, 3))
    gy = rng.standard_normal((2, 16, 9, 9))
    ref = ref_conv_grad_weight(x, gy, w.shape, 1, 1)
    with _trace.recording() as events:
        got = gw_of(gy.astype(dt), x.astype(dt), w.astype(dt), 1, 1, 1)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    assert np.array_equal(np.isinf(got), np.isinf(ref))
    fin = np.isfinite(ref)
    assert rel(got[fin], ref[fin]) <= TOL[dt]
    assert events == [("wgrad", "shift")]


def test_nonfinite_grad_output_keeps_the_shift():
    """gy's values meet only the products the direct sum has: an infinite
    gy needs no other method."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 16, 8, 8))
    w = rng.standard_normal((16, 16, 3, 3))
    gy = rng.standard_normal((1, 16, 8, 8))
    gy[0, 3, 2, 2] = np.inf
    ref = ref_conv_grad_weight(x, gy, w.shape, 1, 1)
    with _trace.recording() as events:
        got = gw_of(gy, x, w, 1, 1, 1)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    assert np.array_equal(np.isinf(got), np.isinf(ref))
    assert events == [("wgrad", "shift")]


def _default(x, w, **kw):
    return cconv.select_backend(x, w, op="grad_weight", **kw)


def test_default_rule():
    z = np.zeros
    f32 = np.float32
    # 3x3x3 on 32 channels and 3x3 on 128: shift; 256 channels: im2col + GEMM
    assert _default(z((1, 32, 8, 16, 16), f32), z((32, 32, 3, 3, 3), f32), padding=1) is Backend.SHIFT
    assert _default(z((4, 128, 28, 28), f32), z((128, 128, 3, 3), f32), padding=1) is Backend.SHIFT
    assert _default(z((1, 256, 16, 16), f32), z((256, 256, 3, 3), f32), padding=1) is Backend.GEMM
    # grouped, 16 input channels per group: shift, whatever the output
    # channels (4 here); 8 input channels per group: the implicit GEMM, but
    # shift where they fill one float32 vector (8-lane kernels)
    assert _default(z((8, 512, 14, 14), f32), z((512, 16, 3, 3), f32), padding=1,
                    groups=32) is Backend.SHIFT
    assert _default(z((8, 512, 14, 14), f32), z((128, 16, 3, 3), f32), padding=1,
                    groups=32) is Backend.SHIFT
    eight = Backend.SHIFT if _kernels.isa() == "avx2" else Backend.IMPLICIT_GEMM
    assert _default(z((8, 256, 28, 28), f32), z((256, 8, 3, 3), f32), padding=1,
                    groups=32) is eight
    # strided: shift with 256 output positions per image and more (not 8x8)
    assert _default(z((2, 32, 32, 32), f32), z((32, 32, 3, 3), f32), stride=2,
                    padding=1) is Backend.SHIFT
    assert _default(z((2, 32, 16, 16), f32), z((32, 32, 3, 3), f32), stride=2,
                    padding=1) is not Backend.SHIFT
    # 1x1, few channels: not shift
    assert _default(z((2, 32, 16, 16), f32), z((32, 32, 1, 1), f32)) is not Backend.SHIFT
    assert _default(z((2, 4, 16, 16), f32), z((32, 4, 3, 3), f32), padding=1) is not Backend.SHIFT


@pytest.mark.skipif("avx2" not in _depthwise.available_isas(), reason="no AVX2 on this CPU")
def test_default_rule_reads_the_vector_width():
    """8 input channels per group fill one float32 vector of the 8-lane
    kernels (AVX2): the shifted products there; float64 (two 4-lane
    vectors) and the 16-lane kernels keep the implicit GEMM below 16."""
    z = np.zeros
    x, w = (8, 64, 28, 28), (64, 8, 3, 3)
    with forced_isa("avx2"):
        assert _default(z(x, np.float32), z(w, np.float32), padding=1, groups=8) is Backend.SHIFT
        assert _default(z(x, np.float64), z(w, np.float64), padding=1, groups=8) is Backend.IMPLICIT_GEMM
    if "avx512" in _depthwise.available_isas():
        with forced_isa("avx512"):
            assert _default(z(x, np.float32), z(w, np.float32), padding=1,
                            groups=8) is Backend.IMPLICIT_GEMM


@pytest.mark.parametrize("seed", range(2))
def test_random_strided_problems_match_the_reference(seed, restore_threads):
    """Strides 1-3 per dimension: the kernel steps through the band by them."""
    rng = np.random.default_rng(500 + seed)
    done = 0
    while done < 12:
        nd = int(rng.integers(1, 4))
        size = tuple(int(v) for v in rng.integers(4, 9 if nd == 3 else 17, nd))
        done += _check_random(rng, nd, int(rng.choice([1, 2])), int(rng.choice([3, 16, 20, 33])),
                              int(rng.choice([1, 7, 16])), size,
                              (np.float32, np.float64)[done % 2], 1 + done % 2, strided=True)


def test_forced_strided_forward_says_why():
    x = np.ones((1, 4, 9, 9), np.float32)
    w = np.ones((4, 4, 3, 3), np.float32)
    with pytest.raises(ValueError, match="stride"):
        cconv.conv2d(x, w, stride=2, backend=Backend.SHIFT)


def test_wanted_names_a_bad_kind():
    from cconv import _kernels
    with pytest.raises(ValueError, match="kind 'adj'"):
        _kernels.wanted("adj", "shift", (), 1, 4)
