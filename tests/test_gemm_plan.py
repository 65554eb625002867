"""How the GEMM convolutions' forward cuts its work into items
(src/gemm/gemm_plan.h), seen through ``_kernels.fwd_split``: images per
block, column tiles per block, chunks of output channels.

A 1x1 layer whose GEMMs read the input in place (GEMM_1X1) has no im2col
for its items to share, and every cut makes a GEMM read an operand again:
it is cut into one item per split thread (the CPU count), along the
cheaper operand (column tiles where there are fewer output channels than
positions, else chunks of output channels), and so is a 1x1 layer's
im2col (a strided copy of the input); a larger kernel's im2col keeps two
items per split thread.  The cuts never depend on the thread count of the call:
every result is bit-identical at 1, 2 and 3 threads and within the
suite's bound of the float64 reference."""
from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import _kernels
from cconv._params import make_params

from isa_switch import forced_isa
from methods import fwd_method
from reference import ref_conv

ISAS = _kernels.available_isas()


def _params(xs, ws, stride=1, dtype=np.float32):
    return make_params(xs, ws, None, stride, 0, 1, False, 0, 1, "t", dtype)


def _geom(xs, ws, stride=1, dtype=np.float32):
    return _params(xs, ws, stride, dtype).geom()


def test_in_place_1x1_one_item_per_split_thread_along_the_cheaper_operand():
    s = _kernels.split_threads()
    deep = _geom((1, 1024, 14, 14), (256, 1024, 1, 1))   # 256 channels > 196 positions
    wide = _geom((1, 256, 56, 56), (64, 256, 1, 1))      # 64 channels < 3136 positions
    if s >= 2:
        assert _kernels.fwd_split("gemm_1x1", deep, 4) == (1, 1, s)
        assert _kernels.fwd_split("gemm_1x1", wide, 4) == (1, s, 1)
        # im2col over the same 1x1 problem: the same cuts
        assert _kernels.fwd_split("im2col", deep, 4) == (1, 1, s)
    else:
        assert _kernels.fwd_split("gemm_1x1", deep, 4) == (1, 1, 1)
    # as many images as split threads: no cut at all
    many = _geom((max(s, 1), 1024, 14, 14), (256, 1024, 1, 1))
    assert _kernels.fwd_split("gemm_1x1", many, 4) == (1, 1, 1)
    # a strided 1x1 layer's im2col (a strided copy of the input) alike
    ds = _geom((1, 512, 28, 28), (1024, 512, 1, 1), stride=2)   # 1024 > 196
    ds_wide = _geom((1, 64, 112, 112), (128, 64, 1, 1), stride=2)  # 128 < 3136
    if s >= 2:
        assert _kernels.fwd_split("im2col", ds, 4) == (1, 1, s)
        assert _kernels.fwd_split("im2col", ds_wide, 4) == (1, s, 1)
        # a 3x3 layer's im2col keeps two items per split thread
        p3 = make_params((1, 256, 14, 14), (256, 256, 3, 3), None, 1, 1, 1, False, 0, 1, "t",
                         np.float32).geom()
        nb, tiles, chunks = _kernels.fwd_split("im2col", p3, 4)
        assert tiles * chunks >= 2 * s
    # float64 alike
    assert _kernels.fwd_split("gemm_1x1", _geom((1, 1024, 14, 14), (256, 1024, 1, 1),
                                                dtype=np.float64), 8) == \
        _kernels.fwd_split("gemm_1x1", deep, 4)


def test_fwd_split_bad_arguments():
    strided = _geom((1, 64, 14, 14), (32, 64, 1, 1), stride=2)   # not in place
    with pytest.raises(ValueError, match="gemm_1x1 forward does not apply"):
        _kernels.fwd_split("gemm_1x1", strided, 4)
    with pytest.raises(ValueError, match="unknown GEMM method 'winograd'"):
        _kernels.fwd_split("winograd", strided, 4)
    with pytest.raises(ValueError, match="shift forward does not apply"):
        _kernels.fwd_split("shift", strided, 4)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_in_place_1x1_bit_identical_across_threads(seed, dtype, restore_threads):
    rng = np.random.default_rng(seed)
    for _ in range(6):
        n = int(rng.integers(1, 4))
        c = int(rng.choice([8, 64, 256, 520]))
        co = int(rng.choice([16, 48, 200, 384]))
        h, w = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        x = rng.standard_normal((n, c, h, w)).astype(dtype)
        wt = rng.standard_normal((co, c, 1, 1)).astype(dtype)
        b = rng.standard_normal(co).astype(dtype)
        ref = ref_conv(x.astype(np.float64), wt.astype(np.float64), b.astype(np.float64), 1, 0)
        ys = []
        for t in (1, 2, 3):
            cconv.set_num_threads(t)
            ys.append(cconv.conv2d(x, wt, b, backend="gemm_1x1"))
        assert all(np.array_equal(ys[0], y) for y in ys[1:]), (x.shape, wt.shape)
        tol = 2e-5 if dtype == np.float32 else 1e-12
        assert np.abs(ys[0] - ref).max() <= tol * np.abs(ref).max(), (x.shape, wt.shape)


@pytest.mark.parametrize("name", ISAS)
def test_strided_1x1_takes_im2col_where_the_own_gemm_runs(name):
    """1x1 layers with a stride: im2col (a strided copy) + the own GEMM
    where it runs (16-lane float32 kernels with CCONV_UK_GEMM on), the
    implicit GEMM elsewhere; 1x1 layers read in place stay on GEMM_1X1."""
    with forced_isa(name):
        own = _kernels.uk_gemm_runs()
        for xs, ws in [((1, 512, 28, 28), (1024, 512, 1, 1)), ((8, 256, 56, 56), (512, 256, 1, 1))]:
            for dt, es in ((np.float32, 4), (np.float64, 8)):
                p = _params(xs, ws, stride=2, dtype=dt)
                want = "im2col" if own and es == 4 else "igemm"
                assert {fwd_method(p, nt, es) for nt in (1, 2)} == {want}, (name, xs, es)
        assert fwd_method(_params((1, 512, 28, 28), (1024, 512, 1, 1)), 1, 4) == "gemm"


@pytest.mark.parametrize("seed", [3])
def test_strided_1x1_values(seed, restore_threads):
    """Random strided 1x1 layers by the default method, 1-3 threads: the
    same bits at every thread count, within the bound of the reference."""
    rng = np.random.default_rng(seed)
    for _ in range(6):
        n, c = int(rng.integers(1, 4)), int(rng.choice([16, 96, 512]))
        co = int(rng.choice([32, 200]))
        h, w, st = int(rng.integers(2, 40)), int(rng.integers(2, 40)), int(rng.integers(2, 4))
        x = rng.standard_normal((n, c, h, w)).astype(np.float32)
        wt = rng.standard_normal((co, c, 1, 1)).astype(np.float32)
        ref = ref_conv(x.astype(np.float64), wt.astype(np.float64), None, st, 0)
        ys = []
        for t in (1, 2, 3):
            cconv.set_num_threads(t)
            ys.append(cconv.conv2d(x, wt, stride=st))
        assert all(np.array_equal(ys[0], y) for y in ys[1:]), (x.shape, wt.shape, st)
        assert np.abs(ys[0] - ref).max() <= 2e-5 * np.abs(ref).max(), (x.shape, wt.shape, st)
