"""Strides, dilations and padding far beyond the input: they are parameters,
not memory, so no kernel may size a buffer by them or let an index product
wrap.  Each case runs in a subprocess (a regression would crash, not fail:
a stride of 2^31 once made the implicit GEMM's band "0 bytes" and crashed
the interpreter, and a depthwise stride of 1e8 asked for gigabytes of row
buffers).  Expected values are exact: every product either meets the input
or, past it, only padding.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_PRELUDE = """
import numpy as np, cconv
def check(a, b):
    a = np.asarray(a); b = np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.array_equal(a, b), (a, b)
"""


def _run(code: str, cwd) -> None:
    # cwd: not the checkout, whose cconv/ (no compiled modules) would shadow
    # the installed package
    r = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=240, cwd=cwd)
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stdout}\n{r.stderr}"


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("s", [2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1])
def test_dense_huge_stride(nd, s, tmp_path):
    """(2^62 and 2^63 - 1, one output per dim: the stride is never applied,
    and the result is PyTorch's; it was "too large for 64-bit indexing".)"""
    _run(f"""
    nd, s = {nd}, {s}
    f = getattr(cconv, f"conv{{nd}}d")
    for dt in (np.float32, np.float64):
        x = np.ones((2, 2) + (5,) * nd, dt); w = np.ones((4, 2) + (3,) * nd, dt)
        b = np.arange(4, dtype=dt)
        # one output per dim: the stride never multiplies anything
        y = f(x, w, b, stride=s)
        check(y, np.broadcast_to((2 * 3**nd + b).reshape((1, 4) + (1,) * nd), (2, 4) + (1,) * nd))
        gy = np.ones_like(y)
        gx, gw, gb = cconv.convolution_backward(gy, x, w, [4], (s,) * nd, (0,) * nd, (1,) * nd,
                                                False, (0,) * nd, 1, (True, True, True))
        ex = np.zeros_like(x); ex[(slice(None), slice(None)) + (slice(0, 3),) * nd] = 4
        check(gx, ex); check(gw, np.full_like(w, 2)); check(gb, np.full(4, 2, dt))
        # padding s // 2: two outputs per dim, each reading padding only
        if s < 2**40:
            y = f(x, w, b, stride=s, padding=s // 2)
            check(y, np.broadcast_to(b.reshape((1, 4) + (1,) * nd), (2, 4) + (2,) * nd))
            gx, gw, _ = cconv.convolution_backward(np.ones_like(y), x, w, None, (s,) * nd,
                                                   (s // 2,) * nd, (1,) * nd, False, (0,) * nd, 1,
                                                   (True, True, False))
            check(gx, np.zeros_like(x)); check(gw, np.zeros_like(w))
    """, tmp_path)


@pytest.mark.parametrize("s", [10**4, 10**6, 10**8, 2**31])
def test_depthwise_huge_stride_falls_back(s, tmp_path):
    """Depthwise geometries whose row buffers would follow a huge stride go
    to the GEMM backends (fast, exact); the depthwise kernels refuse them
    by name when forced."""
    _run(f"""
    s = {s}
    x = np.ones((1, 2, 2, 2), np.float32); w = np.ones((2, 1, 3, 3), np.float32)
    b = np.array([5, 7], np.float32)
    y = cconv.conv2d(x, w, b, stride=s, padding=s, groups=2)
    ey = np.broadcast_to(b.reshape(1, 2, 1, 1), (1, 2, 2, 2)).copy()
    ey[:, :, 1, 1] += 4  # output (1, 1) starts at input (0, 0): 2 x 2 taps meet it
    check(y, ey)
    assert cconv.select_backend(x, w, b, s, s, 1, False, 0, 2) != cconv.Backend.DEPTHWISE
    yt = cconv.conv_transpose2d(x, w, b, stride=s, padding=s // 2, groups=2)
    n = (2 - 1) * s - 2 * (s // 2) + 3
    check(yt, np.broadcast_to(b.reshape(1, 2, 1, 1), (1, 2, n, n)))
    try:
        cconv.conv2d(x, w, b, stride=s, padding=s, groups=2, backend="depthwise")
    except ValueError as e:
        assert "DEPTHWISE" in str(e) and "geometry" in str(e), e
    else:
        raise AssertionError("the forced depthwise backend took the geometry")
    """, tmp_path)
