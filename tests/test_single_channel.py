"""One input channel (groups == 1, C_in == 1 of the plain convolution): a
bank of filters over one signal, image or volume.  It is also a depthwise
convolution of channel multiplier C_out, so the depthwise methods run it
(the default choice for one filter where the depthwise split keeps the
threads busy: ``_SINGLE_MAX_FILTERS``, ``_depthwise.fwd_parallel``).

Every depthwise backend is forced in turn on random single-channel
problems (1-D to 3-D, plain and transposed, strides, dilations, padding,
1-5 filters, with and without bias, empty batches) and checked against the
float64 NumPy reference of tests/reference.py: the forward and
``convolution_backward``'s three gradients; the default path's gradients
also against central finite differences in float64.  The default choice's
bound, non-finite weights and the message for a layer that is neither
depthwise nor single-channel are checked too.
"""
from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

import cconv
from cconv import Backend

from reference import (
    fd_grad,
    nonfinite_mismatch,
    ref_conv,
    ref_conv_grad_input,
    ref_conv_grad_weight,
    ref_conv_transpose,
    ref_conv_transpose_grad_input,
    ref_conv_transpose_grad_weight,
    rel_err,
    tolerance,
)

DW_BACKENDS = (Backend.DEPTHWISE, Backend.DEPTHWISE_PLANE, Backend.DEPTHWISE_CHANNEL_BLOCKS,
               Backend.WINOGRAD_DEPTHWISE_3X3)
DW_NAMES = {b.value for b in DW_BACKENDS} | {Backend.DEPTHWISE_NHWC.value}


def random_problem(rng, nsp, transposed, nfilt=None):
    """(x, w, bias, kwargs) of a single-channel problem: plain x (N, 1, *L),
    w (m, 1, *k); transposed x (N, m, *L), w (m, 1, *k), one output
    channel."""
    while True:
        x, w, b, kw = _draw(rng, nsp, transposed, nfilt)
        out = [(n - 1) * ss - 2 * pp + dd * (kk - 1) + op + 1 if transposed else
               (n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
               for n, kk, ss, pp, dd, op in zip(x.shape[2:], w.shape[2:], kw["stride"],
                                                kw["padding"], kw["dilation"],
                                                kw["output_padding"] or (0,) * nsp)]
        if min(out) >= 1:
            return x, w, b, kw


def _draw(rng, nsp, transposed, nfilt):
    m = int(rng.integers(1, 6)) if nfilt is None else nfilt
    k = tuple(int(v) for v in rng.integers(1, {1: 8, 2: 6, 3: 4}[nsp], nsp))
    s = tuple(int(v) for v in rng.choice([1, 1, 2, 3], nsp))
    d = tuple(int(v) for v in rng.choice([1, 1, 2], nsp))
    p = tuple(int(v) for v in rng.integers(0, 3, nsp))
    hi = {1: 200, 2: 40, 3: 12}[nsp]
    size = tuple(max(int(v), (kk - 1) * dd + 1 - 2 * pp)
                 for v, kk, dd, pp in zip(rng.integers(1, hi, nsp), k, d, p))
    n = int(rng.choice([0, 1, 2, 3]))
    x = rng.standard_normal((n, m if transposed else 1) + size)
    w = rng.standard_normal((m, 1) + k)
    c_out = 1 if transposed else m
    b = rng.standard_normal(c_out) if rng.random() < 0.6 else None
    kw = dict(stride=s, padding=p, dilation=d, transposed=transposed,
              output_padding=tuple(int(rng.integers(0, min(ss, dd))) for ss, dd in zip(s, d))
              if transposed else 0, groups=1)
    return x, w, b, kw


def reference(x, w, b, kw):
    if kw["transposed"]:
        return ref_conv_transpose(x, w, b, kw["stride"], kw["padding"], kw["output_padding"], 1,
                                  kw["dilation"])
    return ref_conv(x, w, b, kw["stride"], kw["padding"], None, kw["dilation"], 1)


def reference_grads(x, w, gy, kw):
    if kw["transposed"]:
        args = (kw["stride"], kw["padding"], kw["output_padding"], 1, kw["dilation"])
        return (ref_conv_transpose_grad_input(gy, w, x.shape, *args),
                ref_conv_transpose_grad_weight(x, gy, w.shape, *args),
                gy.sum(axis=(0,) + tuple(range(2, gy.ndim))))
    args = (kw["stride"], kw["padding"], None, kw["dilation"], 1)
    return (ref_conv_grad_input(gy, w, x.shape, *args),
            ref_conv_grad_weight(x, gy, w.shape, *args),
            gy.sum(axis=(0,) + tuple(range(2, gy.ndim))))


def close(got, ref, dtype, red_len, what):
    err = rel_err(got, ref)
    tol = tolerance(dtype, red_len)
    assert err <= tol, f"{what}: relative error {err:.2e} > {tol:.0e}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_every_depthwise_backend(nsp, transposed, dtype):
    rng = np.random.default_rng(zlib.crc32(f"single {nsp} {transposed} {np.dtype(dtype)}".encode()))
    ran = {b: 0 for b in DW_BACKENDS}
    for _ in range(12):
        x, w, b, kw = random_problem(rng, nsp, transposed)
        x, w = x.astype(dtype), w.astype(dtype)
        b = None if b is None else b.astype(dtype)
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        ref = reference(x64, w64, None if b is None else b.astype(np.float64), kw)
        gy = rng.standard_normal(ref.shape).astype(dtype)
        gref = reference_grads(x64, w64, gy.astype(np.float64), kw)
        red = int(np.prod(w.shape[2:])) * (w.shape[0] if transposed else 1)
        for backend in DW_BACKENDS + (None,):
            try:
                y = cconv.convolution(x, w, b, **kw, backend=backend)
            except ValueError as e:
                # a method that cannot run this geometry says why; the
                # generic DEPTHWISE runs every single-channel problem
                assert backend is not None and backend is not Backend.DEPTHWISE, str(e)
                assert "or one input channel" not in str(e), str(e)
                continue
            ran[backend] = ran.get(backend, 0) + 1
            assert y.dtype == dtype and y.shape == ref.shape
            close(y, ref, dtype, red, f"forward {backend} {x.shape} {w.shape} {kw}")
            try:
                gx, gw, gb = cconv.convolution_backward(
                    gy, x, w, None if b is None else b.shape, kw["stride"], kw["padding"],
                    kw["dilation"], transposed, kw["output_padding"], 1, (True, True, b is not None),
                    backend=backend)
            except ValueError as e:
                assert backend is not None and backend is not Backend.DEPTHWISE, str(e)
                continue
            close(gx, gref[0], dtype, red, f"grad_input {backend} {x.shape} {w.shape} {kw}")
            close(gw, gref[1], dtype, max(1, int(np.prod(gy.shape)) // max(1, gy.shape[1])),
                  f"grad_weight {backend} {x.shape} {w.shape} {kw}")
            if b is not None:
                close(gb, gref[2], dtype, 0, f"grad_bias {backend}")
    assert ran[Backend.DEPTHWISE] == 12


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_specialised_kernels(dtype):
    """The plane kernels, the channel blocks and the depthwise Winograd on
    the geometries they take: square 3x3 / 5x5 / 7x7 at stride 1 and 2,
    3x3 at dilation 2 and 4, 3x3x3 volumes, 1-3 filters, widths around
    the vector lengths, against the reference."""
    rng = np.random.default_rng(zlib.crc32(f"single special {np.dtype(dtype)}".encode()))
    ran = {b: 0 for b in DW_BACKENDS}
    shapes = [((3, 3), 1, 1), ((3, 3), 2, 1), ((5, 5), 1, 1), ((5, 5), 2, 1), ((7, 7), 1, 1),
              ((7, 7), 2, 1), ((3, 3), 1, 2), ((3, 3), 1, 4), ((3, 3, 3), 1, 1),
              ((3, 3, 3), 2, 1)]
    for k, s_, d_ in shapes:
        for m in (1, 2, 3):
            nsp = len(k)
            size = tuple(int(v) for v in rng.integers(d_ * (k[0] - 1) + 1, 40 if nsp == 2 else 12,
                                                      nsp))
            x = rng.standard_normal((int(rng.integers(1, 3)), 1) + size).astype(dtype)
            w = rng.standard_normal((m, 1) + k).astype(dtype)
            b = rng.standard_normal(m).astype(dtype)
            pad = d_ * (k[0] - 1) // 2
            kw = dict(stride=(s_,) * nsp, padding=(pad,) * nsp, dilation=(d_,) * nsp,
                      transposed=False, output_padding=0, groups=1)
            ref = reference(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), kw)
            for backend in DW_BACKENDS:
                try:
                    y = cconv.convolution(x, w, b, **kw, backend=backend)
                except ValueError as e:
                    assert backend is not Backend.DEPTHWISE and "or one input channel" not in str(e)
                    continue
                ran[backend] += 1
                close(y, ref, dtype, int(np.prod(k)), f"{backend} {x.shape} {w.shape} {kw}")
    assert ran[Backend.DEPTHWISE_PLANE] >= 10 and ran[Backend.DEPTHWISE_CHANNEL_BLOCKS] >= 10, ran
    if dtype == np.float32:
        assert ran[Backend.WINOGRAD_DEPTHWISE_3X3] >= 1, ran


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_default_gradients_by_finite_differences(nsp, transposed):
    rng = np.random.default_rng(zlib.crc32(f"single fd {nsp} {transposed}".encode()))
    size = {1: (9,), 2: (5, 6), 3: (3, 4, 4)}[nsp]
    k = {1: (3,), 2: (3, 2), 3: (2, 2, 3)}[nsp]
    m = 1
    x = rng.standard_normal((2, m if transposed else 1) + size)
    w = rng.standard_normal((m, 1) + k)
    b = rng.standard_normal(1 if transposed else m)
    kw = dict(stride=(2,) + (1,) * (nsp - 1), padding=(1,) * nsp, dilation=(1,) * nsp,
              transposed=transposed, output_padding=0, groups=1)
    y = cconv.convolution(x, w, b, **kw)
    assert cconv.select_backend(x, w, b, **kw).value in DW_NAMES
    G = rng.standard_normal(y.shape)
    gx, gw, gb = cconv.convolution_backward(G, x, w, b.shape, kw["stride"], kw["padding"],
                                            kw["dilation"], transposed, 0, 1, (True, True, True))
    loss = lambda: float(np.vdot(G, cconv.convolution(x, w, b, **kw)))  # noqa: E731
    for name, got, a in (("grad_input", gx, x), ("grad_weight", gw, w), ("grad_bias", gb, b)):
        err = rel_err(got, fd_grad(loss, a, h=1e-4))
        assert err < 1e-8, f"{name}: finite-difference relative error {err:.2e}"


@pytest.mark.parametrize("nsp,size,k", [(2, (64, 64), (3, 3)), (2, (40, 40), (5, 5)),
                                        (3, (16, 16, 16), (3, 3, 3))])
def test_default_choice_bound(nsp, size, k):
    """One filter over one channel takes a depthwise method, 2 and more the
    implicit GEMM (or another dense method), float32 and float64."""
    for dtype in (np.float32, np.float64):
        x = np.ones((2, 1) + size, dtype)
        for m in (1, 2, 3, 8):
            w = np.ones((m, 1) + k, dtype)
            got = cconv.select_backend(x, w, padding="same")
            if m == 1:
                assert got.value in DW_NAMES, (m, got)
            else:
                assert got.value not in DW_NAMES, (m, got)


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


def test_few_long_signals_stay_on_the_implicit_gemm():
    """A 1-D layer is one depthwise work item per signal: one or two long
    signals on a CPU of several cores take the implicit GEMM, whose tiles
    split a row; many signals, or short ones, the depthwise kernels."""
    w = np.ones((1, 1, 31), np.float32)
    long1 = np.ones((1, 1, 200000), np.float32)
    many = np.ones((256, 1, 2000), np.float32)
    short = np.ones((1, 1, 300), np.float32)
    got = cconv.select_backend(long1, w, padding="same")
    if _cpus() >= 2:
        assert got is Backend.IMPLICIT_GEMM, got
    assert cconv.select_backend(many, w, padding="same").value in DW_NAMES
    assert cconv.select_backend(short, w, padding="same").value in DW_NAMES
    # the choice does not depend on the caller's thread count
    before = cconv.get_num_threads()
    try:
        cconv.set_num_threads(1)
        assert cconv.select_backend(long1, w, padding="same") is got
    finally:
        cconv.set_num_threads(before)


def test_nonfinite_weights_keep_the_reference_pattern():
    """A NaN or infinite weight sends the depthwise methods' problems to the
    GEMM methods (their im2col products give the reference's pattern): a
    single-channel layer with padding, where the depthwise kernels would
    skip the padded rows."""
    rng = np.random.default_rng(5)
    for bad in (np.inf, -np.inf, np.nan):
        x = rng.standard_normal((2, 1, 12, 13))
        w = rng.standard_normal((2, 1, 3, 3))
        w[1, 0, 0, 2] = bad
        x[0, 0, 4, 4] = np.nan
        for dtype in (np.float32, np.float64):
            y = cconv.conv2d(x.astype(dtype), w.astype(dtype), padding=2)
            ref = ref_conv(x, w, None, 1, 2)
            assert nonfinite_mismatch(y, ref) is None, (bad, dtype, nonfinite_mismatch(y, ref))
            fin = np.isfinite(ref)
            assert rel_err(y[fin], ref[fin]) <= tolerance(dtype, 9)


def test_neither_depthwise_nor_single_channel_is_refused_with_the_reason():
    x = np.ones((1, 2, 8, 8), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    for backend in DW_BACKENDS:
        pattern = (r"groups=1, C_in=2" if backend is Backend.WINOGRAD_DEPTHWISE_3X3
                   else r"or one input channel\), but groups=1.*2 channels")
        with pytest.raises(ValueError, match=pattern):
            cconv.conv2d(x, w, backend=backend)
    # grouped but not depthwise: 4 channels in 2 groups
    x4 = np.ones((1, 4, 8, 8), np.float32)
    w4 = np.ones((4, 2, 3, 3), np.float32)
    with pytest.raises(ValueError, match=r"groups=2.*4 channels"):
        cconv.conv2d(x4, w4, groups=2, backend="depthwise")
