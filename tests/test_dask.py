"""Dask arrays: the forward functions, convolution_backward, the cconv.grad
helpers and the double backward return lazy dask arrays whose values are
the NumPy path's (bit for bit where the chunking leaves each output's sum
as it was, within the dtype's tolerance otherwise) and the float64
reference's, on random shapes, parameters and chunkings; graph structure
(tasks per chunk, halo strips, a weight computed once); the weight and bias
gradients' fixed order of additions; bad arguments and chunkings.

The tests on a dask.distributed cluster are in test_dask_distributed.py.
"""
from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
import threading

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import cconv  # noqa: E402
from reference import assert_close, nonfinite_mismatch, rel_err, tolerance  # noqa: E402
from test_backward import random_case, randn, reference_forward, reference_grads  # noqa: E402

DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128]
FWD = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}
FWD_T = {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d, 3: cconv.conv_transpose3d}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _one_cconv_thread(request):
    """One cconv thread per call, as advised for many small blocks: the
    blocks here are tiny, and on a loaded machine each multi-threaded call
    waits milliseconds for its second thread to get a core (a 5 us call took
    15-30 ms).  Tests marked ``cconv_threads`` keep the default."""
    if request.node.get_closest_marker("cconv_threads"):
        yield
        return
    n = cconv.get_num_threads()
    cconv.set_num_threads(1)
    yield
    cconv.set_num_threads(n)


def rand_chunks(rng, n: int, most: int = 4):
    """Random chunk sizes along an axis of length n (1 to ``most`` chunks)."""
    k = int(rng.integers(1, most + 1))
    if n <= 1 or k == 1:
        return (n,)
    cuts = sorted({int(c) for c in rng.integers(1, n, k - 1)})
    b = [0] + cuts + [n]
    return tuple(hi - lo for lo, hi in zip(b, b[1:]))


def grown_case(rng, **kw):
    """A random case of test_backward's kind, its spatial sizes grown up to 3x
    (so chunks can be several halos long)."""
    c = random_case(rng, **kw)
    f = int(rng.integers(1, 4)) if c.nsp < 3 else int(rng.integers(1, 3))
    return dataclasses.replace(c, size=tuple(s * f for s in c.size))


def run(a, scheduler="sync"):
    return dask.compute(a, scheduler=scheduler)[0]


def is_plain_dense(case, dtype) -> bool:
    """A plain convolution the NumPy path runs off the depthwise backend,
    with too few channels for Winograd (whose choice depends on the batch):
    splitting its batch, channels or space leaves every output's sum as it
    was, so the dask result is the NumPy result bit for bit."""
    if case.transposed or case.c_in >= 32 or case.c_out >= 32:
        return False
    x = np.zeros(case.input_shape(), dtype=np.float32)
    w = np.zeros(case.weight_shape(), dtype=np.float32)
    be = cconv.select_backend(x, w, None, case.stride, case.padding, case.dilation, False, 0, case.groups)
    return be is cconv.Backend.GEMM


def fwd_args(case):
    s, p, d, t, op, g = case.args()
    return s, p, d, t, op, g


# --------------------------------------------------------------------------
# forward
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(60))
def test_forward_random(seed):
    rng = np.random.default_rng(7000 + seed)
    dtype = DTYPES[seed % len(DTYPES)]
    case = grown_case(rng)
    x = randn(rng, case.input_shape(), dtype)
    w = randn(rng, case.weight_shape(), dtype)
    b = randn(rng, (case.c_out,), dtype) if rng.random() < 0.6 else None
    s, p, d, t, op, g = fwd_args(case)
    ref_np = cconv.convolution(x, w, b, s, p, d, t, op, g)
    chunks = tuple(rand_chunks(rng, n) for n in x.shape)
    xd = da.from_array(x, chunks=chunks)
    wd = da.from_array(w, chunks=tuple(rand_chunks(rng, n, 2) for n in w.shape)) if seed % 3 == 0 else w
    bd = da.from_array(b, chunks=rand_chunks(rng, b.shape[0], 2)) if b is not None and seed % 4 == 0 else b
    yd = cconv.convolution(xd, wd, bd, s, p, d, t, op, g)
    assert isinstance(yd, da.Array)
    assert yd.shape == ref_np.shape and yd.dtype == ref_np.dtype
    assert yd.chunks[0] == xd.chunks[0]
    y = run(yd, "threads" if seed % 2 else "sync")
    assert y.shape == ref_np.shape and y.dtype == ref_np.dtype
    red = (case.c_in // case.groups if not case.transposed else case.c_out // case.groups) * math.prod(case.kernel)
    assert_close(y, ref_np, dtype, red, "dask vs NumPy path")
    up = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    ref = reference_forward(case, x.astype(up), w.astype(up), None if b is None else b.astype(up))
    assert_close(y, ref, dtype, red, "dask vs reference")
    if is_plain_dense(case, dtype):
        np.testing.assert_array_equal(y, ref_np)


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_forward_functions_and_unbatched(nsp, transposed):
    rng = np.random.default_rng(100 + nsp + 10 * transposed)
    size = {1: (37,), 2: (19, 14), 3: (9, 8, 7)}[nsp]
    k = (3,) * nsp
    if transposed:
        w = randn(rng, (4, 3) + k, np.float32)
        kw = dict(stride=2, padding=1, output_padding=1)
        f = FWD_T[nsp]
    else:
        w = randn(rng, (3, 4) + k, np.float32)
        kw = dict(stride=2, padding=1, dilation=2)
        f = FWD[nsp]
    b = randn(rng, (3,), np.float32)
    x = randn(rng, (4,) + size, np.float32)          # unbatched
    ref = f(x, w, b, **kw)
    xd = da.from_array(x, chunks=(4,) + tuple(max(1, n // 3) for n in size))
    yd = f(xd, w, b, **kw)
    assert yd.shape == ref.shape
    np.testing.assert_allclose(run(yd), ref, rtol=1e-5, atol=1e-5)
    # batched, the same through convolution()
    xb = da.from_array(x[None].repeat(3, 0), chunks=(1, 2) + tuple(max(1, n // 2) for n in size))
    yb = f(xb, w, b, **kw)
    np.testing.assert_allclose(run(yb), f(x[None].repeat(3, 0), w, b, **kw), rtol=1e-5, atol=1e-5)


def test_numpy_input_with_dask_weight_and_bias():
    rng = np.random.default_rng(3)
    x = randn(rng, (2, 4, 12, 12), np.float64)
    w = randn(rng, (6, 2, 3, 3), np.float64)
    b = randn(rng, (6,), np.float64)
    ref = cconv.conv2d(x, w, b, padding=1, groups=2)
    for args in ((x, da.from_array(w, chunks=(2, 1, 3, 3)), b), (x, w, da.from_array(b, chunks=3)),
                 (da.from_array(x, chunks=(1, 4, 5, 7)), w, da.from_array(b, chunks=2))):
        y = cconv.conv2d(*args, padding=1, groups=2)
        assert isinstance(y, da.Array)
        np.testing.assert_array_equal(run(y), ref)


def _max_pieces_per_axis(y, src_name: str, ndim: int):
    """The most chunks of the source layer ``src_name`` that one task of
    ``y``'s layer reads along a spatial axis (strips counted by the chunk
    they were cut from)."""
    layer = y.dask.layers[y.name]
    cut_of = {}
    for k, t in layer.items():
        if k[0] != y.name and "-cut-" in k[0]:
            (d,) = [dd for dd in t.dependencies if dd[0] == src_name]
            cut_of[k] = d
    most = 0
    for k, t in layer.items():
        if k[0] != y.name:
            continue
        blocks = [b for b in {cut_of.get(d, d) for d in t.dependencies} if b[0] == src_name]
        for ax in range(3, ndim + 1):
            most = max(most, len({b[ax] for b in blocks}))
    return most


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_chunks_smaller_than_the_halo_are_merged(dtype):
    """Chunks of 1 and 2 under a kernel reaching 12 positions: merged with
    their neighbours first (a rechunk), so that a task reads at most three
    chunks along an axis; the results are the NumPy path's."""
    rng = np.random.default_rng(11)
    x = randn(rng, (2, 3, 30, 17), dtype)
    w = randn(rng, (4, 3, 5, 4), dtype)
    for kw in (dict(padding=4, dilation=3), dict(padding="same", dilation=(3, 2)), dict(stride=3, dilation=2)):
        ref = cconv.conv2d(x, w, **kw)
        yd = cconv.conv2d(da.from_array(x, chunks=(1, 3, 1, 2)), w, **kw)
        (src,) = [n for n in yd.dask.dependencies[yd.name] if n.startswith("rechunk")]
        assert 1 <= _max_pieces_per_axis(yd, src, 4) <= 3
        assert len(yd.chunks[2]) < 30 and len(yd.chunks[3]) < 9
        np.testing.assert_array_equal(run(yd), ref)
    wt = randn(rng, (3, 2, 5, 4), dtype)
    for kw in (dict(stride=3, padding=2, dilation=3, output_padding=2), dict(stride=1, padding=7, dilation=3)):
        ref = cconv.conv_transpose2d(x, wt, **kw)
        y = run(cconv.conv_transpose2d(da.from_array(x, chunks=(2, 1, 2, 1)), wt, **kw))
        assert_close(y, ref, dtype, 2 * 20)
    # gradients read merged grad_output chunks; grad_input keeps the input's chunks
    gy = randn(rng, cconv.conv2d(x, w, padding=4, dilation=3).shape, dtype)
    xd = da.from_array(x, chunks=(1, 3, 1, 2))
    res = cconv.convolution_backward(da.from_array(gy, chunks=(1, 4, 1, 1)), xd, w, None, 1, 4, 3, False, 0, 1,
                                     (True, True, True))
    assert res[0].chunks == xd.chunks
    ref = cconv.convolution_backward(gy, x, w, None, 1, 4, 3, False, 0, 1, (True, True, True))
    for a, r in zip(dask.compute(*res, scheduler="sync"), ref):
        assert_close(a, r, dtype, 2 * 30 * 17)


def test_merged_chunks():
    from cconv._dask._geometry import merged

    assert merged((5, 5, 5), 3) == (5, 5, 5)
    assert merged((1, 1, 1, 1, 10, 2), 3) == (3, 13)      # the short rest joins the last
    assert merged((2, 2), 5) == (4,)
    assert merged((0, 5, 0, 7), 1) == (5, 7)
    assert merged((4, 0, 4), 0) == (4, 0, 4)            # no halo: nothing to merge
    assert sum(merged((1,) * 97, 10)) == 97 and min(merged((1,) * 97, 10)) >= 10


def test_output_chunks():
    x = da.zeros((6, 8, 40, 33), chunks=(2, 3, (10, 10, 15, 5), (11, 11, 11)), dtype=np.float32)
    w = np.zeros((8, 8, 3, 3), np.float32)
    # batch chunks kept; one channel chunk (groups=1); space: boundary / stride, rounded up
    y = cconv.conv2d(x, w, padding=1, stride=2)
    assert y.chunks == ((2, 2, 2), (8,), (5, 5, 8, 2), (6, 5, 6))
    y = cconv.conv2d(x, w, padding="same")
    assert y.chunks[2:] == x.chunks[2:]
    y = cconv.conv2d(x, w)                 # 'valid': the last chunks lose the halo
    assert y.chunks[2:] == ((10, 10, 15, 3), (11, 11, 9))
    # groups: channel chunks of whole groups (boundaries rounded to a group)
    wg = np.zeros((8, 2, 3, 3), np.float32)
    y = cconv.conv2d(x, wg, padding=1, groups=4)
    assert y.chunks[1] == (4, 2, 2)        # channel boundaries 3, 6 -> groups 2, 3 (of 2 channels)
    wd = np.zeros((16, 1, 3, 3), np.float32)
    y = cconv.conv2d(x, wd, padding=1, groups=8)
    assert y.chunks[1] == (6, 6, 4)        # depthwise, multiplier 2
    # transposed: input boundaries times the stride
    wt = np.zeros((8, 5, 4, 4), np.float32)
    y = cconv.conv_transpose2d(x, wt, stride=2, padding=1)
    assert y.chunks[2:] == ((20, 20, 30, 10), (22, 22, 22))
    assert y.chunks[1] == (5,)


def _layer_tasks(a):
    """The tasks of the array's own layer, by kind (name prefix)."""
    layer = a.dask.layers[a.name]
    kinds: dict = {}
    for k in layer:
        kinds.setdefault(k[0], []).append(k)
    return kinds


def test_one_task_per_batch_chunk():
    x = da.ones((16, 8, 20, 20), chunks=(2, 8, 20, 20), dtype=np.float32)
    w = np.ones((4, 8, 3, 3), np.float32)
    y = cconv.conv2d(x, w, padding=1)
    kinds = _layer_tasks(y)
    assert list(kinds) == [y.name]                    # no cut strips: nothing to share
    assert len(kinds[y.name]) == 8 == x.numblocks[0]
    # each task reads its own input block, whole
    for k in kinds[y.name]:
        deps = y.dask.layers[y.name][k].dependencies
        assert sum(1 for d in deps if d[0] == x.name) == 1


def test_halo_strips_are_cut():
    x = da.ones((1, 2, 30, 30), chunks=(1, 2, 10, 10), dtype=np.float32)
    w = np.ones((2, 2, 3, 3), np.float32)
    y = cconv.conv2d(x, w, padding=1)
    layer = y.dask.layers[y.name]
    cuts = [k for k in layer if k[0] != y.name]
    # each block's window: its own block whole, strips of up to 8 neighbours
    centre = layer[(y.name, 0, 0, 1, 1)]
    deps = [d for d in centre.dependencies if not d[0].startswith("cconv-weight")]
    assert len(deps) == 9                   # its own block + the strip tasks of its 8 neighbours
    assert sum(1 for d in deps if d[0] == x.name) == 1
    assert len(cuts) == 9                   # one strip task per block (3 x 3 blocks), not one per strip
    for k in cuts:
        assert len(layer[k].args[1]) in (3, 5, 8)    # a corner block's 3 strips, an edge's 5, the centre's 8
    # a strip is one row or column (or corner) of a neighbour, copied
    strip = run(y)
    np.testing.assert_array_equal(strip, cconv.conv2d(np.ones((1, 2, 30, 30), np.float32), w, padding=1))


def test_dask_weight_computed_once():
    calls = []
    lock = threading.Lock()

    def make_w():
        with lock:
            calls.append(1)
        return np.full((4, 3, 3, 3), 0.5, np.float32)

    wd = da.from_delayed(dask.delayed(make_w)(), shape=(4, 3, 3, 3), dtype=np.float32)
    x = da.ones((6, 3, 32, 32), chunks=(1, 3, 8, 8), dtype=np.float32)
    y = cconv.conv2d(x, wd, padding=1)
    assert y.npartitions == 6 * 16
    out = run(y, "threads")
    assert len(calls) == 1
    np.testing.assert_array_equal(out, cconv.conv2d(np.ones((6, 3, 32, 32), np.float32),
                                                    np.full((4, 3, 3, 3), 0.5, np.float32), padding=1))


def test_lazy_nothing_computed_at_call():
    def boom(block):
        raise RuntimeError("computed")

    x = da.ones((2, 3, 16, 16), chunks=(1, 3, 8, 8), dtype=np.float32).map_blocks(boom, dtype=np.float32)
    w = np.ones((2, 3, 3, 3), np.float32)
    y = cconv.conv2d(x, w, padding=1)
    gi, gw, gb = cconv.convolution_backward(y, x, w, [2], 1, 1, 1, False, 0, 1, (True, True, True))
    assert all(isinstance(a, da.Array) for a in (y, gi, gw, gb))
    with pytest.raises(RuntimeError, match="computed"):
        run(y)


@pytest.mark.cconv_threads
def test_threaded_scheduler_many_workers_matches_sync():
    """Concurrent multi-threaded cconv calls from dask's threads."""
    rng = np.random.default_rng(5)
    x = randn(rng, (4, 8, 48, 40), np.float32)
    w = randn(rng, (8, 8, 3, 3), np.float32)
    xd = da.from_array(x, chunks=(1, 8, 12, 10))
    y = cconv.conv2d(xd, w, padding=1)
    a = run(y, "sync")
    with dask.config.set(num_workers=6):
        b = run(y, "threads")
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, cconv.conv2d(x, w, padding=1))


def test_backend_forwarded_and_checked():
    rng = np.random.default_rng(8)
    x = randn(rng, (2, 4, 15, 15), np.float32)
    w = randn(rng, (4, 1, 3, 3), np.float32)
    xd = da.from_array(x, chunks=(1, 4, 8, 8))
    for be in ("gemm", "depthwise", cconv.Backend.GEMM):
        y = run(cconv.conv2d(xd, w, padding=1, groups=4, backend=be))
        assert_close(y, cconv.conv2d(x, w, padding=1, groups=4, backend=be), np.float32, 9)
    wd = randn(rng, (4, 4, 3, 3), np.float32)
    with pytest.raises(ValueError, match="depthwise"):
        cconv.conv2d(xd, wd, padding=1, backend="depthwise")       # raised at the call, not at compute
    with pytest.raises(ValueError, match="unknown backend"):
        cconv.conv2d(xd, wd, padding=1, backend="nope")


@pytest.mark.parametrize("transposed", [False, True])
def test_nonfinite_pattern_as_numpy(transposed):
    """NaN and inf in input, weight and bias land where the NumPy path puts
    them (padding zeros times an infinite weight are NaN; outputs no input
    reaches hold the bias alone)."""
    rng = np.random.default_rng(21 + transposed)
    for dtype in (np.float32, np.complex64):
        x = randn(rng, (2, 4, 13, 11), dtype)
        x[0, 1, 3, 4] = np.inf
        x[1, 2, 9, 0] = np.nan
        x[0, 0, 12, 10] = -np.inf
        if transposed:
            w = randn(rng, (4, 3, 2, 3), dtype)
            w[1, 0, 0, 2] = np.inf
            kw = dict(stride=(3, 2), padding=(0, 1), output_padding=(2, 1), dilation=(1, 2))
            f = cconv.conv_transpose2d
        else:
            w = randn(rng, (3, 4, 2, 3), dtype)
            w[1, 0, 0, 2] = np.inf
            kw = dict(stride=(2, 1), padding=2, dilation=(3, 1))
            f = cconv.conv2d
        b = randn(rng, (3,), dtype)
        b[2] = np.nan
        ref = f(x, w, b, **kw)
        y = run(f(da.from_array(x, chunks=(1, 2, 4, 3)), w, b, **kw))
        for part in (np.real, np.imag) if np.iscomplexobj(ref) else (np.asarray,):
            assert nonfinite_mismatch(part(y), part(ref)) is None, nonfinite_mismatch(part(y), part(ref))
        fin = np.isfinite(ref)
        assert rel_err(np.where(fin, y, 0), np.where(fin, ref, 0)) <= tolerance(dtype, 100)


def test_float16_overflow_and_dtype():
    x = np.full((1, 2, 8, 8), 200.0, np.float16)
    w = np.full((1, 2, 3, 3), 30.0, np.float16)
    ref = cconv.conv2d(x, w, padding=1)
    y = run(cconv.conv2d(da.from_array(x, chunks=(1, 1, 3, 3)), w, padding=1))
    assert y.dtype == np.float16 and np.isinf(y).any()
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("case", ["batch0", "transposed_empty", "channels0"])
def test_zero_size(case):
    if case == "batch0":
        x, w = np.zeros((0, 3, 5, 5), np.float32), np.ones((2, 3, 3, 3), np.float32)
        kw = dict(transposed=False)
    elif case == "transposed_empty":
        x, w = np.ones((2, 3, 1, 4), np.float32), np.ones((3, 2, 4, 4), np.float32)
        kw = dict(transposed=True, padding=(2, 0))   # float32 mkldnn rule: an empty result
    else:
        x, w = np.ones((2, 0, 5, 5), np.float32), np.ones((4, 0, 3, 3), np.float32)
        kw = dict(transposed=False)
    pad = kw.pop("padding", 0)
    t = kw["transposed"]
    ref = cconv.convolution(x, w, None, 1, pad, 1, t, 0, 1)
    y = cconv.convolution(da.from_array(x), w, None, 1, pad, 1, t, 0, 1)
    assert isinstance(y, da.Array) and y.shape == ref.shape
    np.testing.assert_array_equal(run(y), ref)

    def boom(block):
        raise RuntimeError("computed")

    # the gradients: nothing of the dask arrays is computed at the call
    gy = np.ones(ref.shape, np.float32)
    xd = da.from_array(x, chunks=(1,) + x.shape[1:]).map_blocks(lambda a: a + 0 if a.size == 0 else boom(a),
                                                                 dtype=np.float32)
    args = (1, pad, 1, t, 0, 1, (True, True, True))
    want = cconv.convolution_backward(gy, x, w, None, *args)
    got = cconv.convolution_backward(da.from_array(gy), xd, w, None, *args)
    assert got[0].chunks == xd.chunks
    for g, r in zip(got, want):
        assert g.shape == r.shape and g.dtype == r.dtype
    for g, r in zip((got[0],), (want[0],)):
        if r.size == 0:
            np.testing.assert_array_equal(run(g), r)
    np.testing.assert_array_equal(run(got[1]), want[1])
    np.testing.assert_array_equal(run(got[2]), want[2])
    dbl = cconv.convolution_double_backward(xd, w, None, da.from_array(gy), w, xd, *args[:-1], (True,) * 3)
    ref_d = cconv.convolution_double_backward(x, w, None, gy, w, x, *args[:-1], (True,) * 3)
    for g, r in zip(dbl, ref_d):
        assert g.shape == r.shape and g.dtype == r.dtype
    assert dbl[1].chunks == xd.chunks
    if x.size:   # grad_input of an empty result: zeros, chunked as the input
        np.testing.assert_array_equal(run(da.from_array(x).map_blocks(np.zeros_like) + got[0]),
                                      np.zeros_like(x))


def test_zero_size_chunks_and_big_endian():
    rng = np.random.default_rng(61)
    x = randn(rng, (3, 4, 12, 10), np.float32)
    w = randn(rng, (2, 4, 3, 3), np.float32)
    xd = da.from_array(x, chunks=((1, 0, 2), (4,), (0, 5, 0, 7), (10, 0)))
    y = cconv.conv2d(xd, w, padding=1, stride=(2, 1))
    np.testing.assert_array_equal(run(y), cconv.conv2d(x, w, padding=1, stride=(2, 1)))
    gy = randn(rng, y.shape, np.float32)
    res = cconv.convolution_backward(gy, xd, w, None, (2, 1), 1, 1, False, 0, 1, (True, True, True))
    assert res[0].chunks == xd.chunks
    ref = cconv.convolution_backward(gy, x, w, None, (2, 1), 1, 1, False, 0, 1, (True, True, True))
    for a, r in zip(dask.compute(*res, scheduler="sync"), ref):
        assert_close(a, r, np.float32, 1000)
    xb = x.astype(">f4")
    yb = cconv.conv2d(da.from_array(xb, chunks=(1, 4, 5, 5)), w.astype(">f4"), padding=1)
    assert yb.dtype == np.dtype("<f4").newbyteorder("=")
    out = run(yb)
    assert out.dtype == yb.dtype
    np.testing.assert_array_equal(out, cconv.conv2d(x, w, padding=1))


def test_select_backend_reads_shapes_only():
    def boom(block):
        raise RuntimeError("computed")

    x = da.ones((2, 8, 16, 16), chunks=(1, 8, 8, 8), dtype=np.float32).map_blocks(boom, dtype=np.float32)
    w = np.ones((8, 1, 3, 3), np.float32)
    assert cconv.select_backend(x, w, padding=1, groups=8) == cconv.select_backend(
        np.ones((2, 8, 16, 16), np.float32), w, padding=1, groups=8)


# --------------------------------------------------------------------------
# gradients
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_backward_random(seed):
    rng = np.random.default_rng(8000 + seed)
    dtype = DTYPES[seed % len(DTYPES)]
    case = grown_case(rng)
    x = randn(rng, case.input_shape(), dtype)
    w = randn(rng, case.weight_shape(), dtype)
    gy = randn(rng, case.output_shape(), dtype)
    args = case.args()
    ref_np = cconv.convolution_backward(gy, x, w, [case.c_out], *args, (True, True, True))
    xd = da.from_array(x, chunks=tuple(rand_chunks(rng, n) for n in x.shape))
    gyd = da.from_array(gy, chunks=tuple(rand_chunks(rng, n) for n in gy.shape)) if seed % 5 else gy
    wd = da.from_array(w, chunks=tuple(rand_chunks(rng, n, 2) for n in w.shape)) if seed % 3 == 0 else w
    mask = [(True, True, True), (True, False, False), (False, True, True), (False, False, True)][seed % 4]
    res = cconv.convolution_backward(gyd, xd, wd, [case.c_out], *args, mask)
    assert [r is None for r in res] == [not m for m in mask]
    if mask[0]:
        assert res[0].chunks == xd.chunks
    out = dask.compute(*[r for r in res if r is not None], scheduler="threads" if seed % 2 else "sync")
    it = iter(out)
    got = [next(it) if m else None for m in mask]
    up = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    ref = reference_grads(case, x.astype(up), w.astype(up), gy.astype(up))
    reds = (case.red_len_input(), case.red_len_weight(), case.red_len_bias())
    for name, g, r_np, r, red in zip(("grad_input", "grad_weight", "grad_bias"), got, ref_np, ref, reds):
        if g is None:
            continue
        assert g.shape == r_np.shape and g.dtype == r_np.dtype, name
        assert_close(g, r_np, dtype, red, f"{name}: dask vs NumPy path")
        assert_close(g, r, dtype, red, f"{name}: dask vs reference")


@pytest.mark.parametrize("seed", range(12))
def test_grad_helpers_random(seed):
    rng = np.random.default_rng(8500 + seed)
    dtype = DTYPES[seed % len(DTYPES)]
    case = grown_case(rng, transposed=False)
    nsp = case.nsp
    x = randn(rng, case.input_shape(), dtype)
    w = randn(rng, case.weight_shape(), dtype)
    gy = randn(rng, case.output_shape(), dtype)
    kw = dict(stride=case.stride, padding=case.padding, dilation=case.dilation, groups=case.groups)
    gi_ref = getattr(cconv.grad, f"conv{nsp}d_input")(x.shape, w, gy, **kw)
    gw_ref = getattr(cconv.grad, f"conv{nsp}d_weight")(x, w.shape, gy, **kw)
    gyd = da.from_array(gy, chunks=tuple(rand_chunks(rng, n) for n in gy.shape))
    xd = da.from_array(x, chunks=tuple(rand_chunks(rng, n) for n in x.shape))
    gi = getattr(cconv.grad, f"conv{nsp}d_input")(x.shape, w, gyd, **kw)
    gw = getattr(cconv.grad, f"conv{nsp}d_weight")(xd, w.shape, gyd, **kw)
    gw2 = getattr(cconv.grad, f"conv{nsp}d_weight")(xd, w.shape, gy, **kw)
    assert isinstance(gi, da.Array) and gi.shape == x.shape
    gi, gw, gw2 = dask.compute(gi, gw, gw2, scheduler="threads")
    assert_close(gi, gi_ref, dtype, case.red_len_input())
    assert_close(gw, gw_ref, dtype, case.red_len_weight())
    assert_close(gw2, gw_ref, dtype, case.red_len_weight())


@pytest.mark.parametrize("seed", range(12))
def test_double_backward_random(seed):
    rng = np.random.default_rng(8800 + seed)
    dtype = DTYPES[seed % len(DTYPES)]
    case = grown_case(rng)
    x = randn(rng, case.input_shape(), dtype)
    w = randn(rng, case.weight_shape(), dtype)
    gO = randn(rng, case.output_shape(), dtype)
    ggI = randn(rng, x.shape, dtype) if seed % 3 != 1 else None
    ggW = randn(rng, w.shape, dtype) if seed % 3 != 2 else None
    nb = case.c_out
    ggb = randn(rng, (nb,), dtype) if seed % 2 == 0 else None
    args = case.args()
    ref = cconv.convolution_double_backward(ggI, ggW, ggb, gO, w, x, *args, (True, True, True))

    def ch(a):
        return None if a is None else da.from_array(a, chunks=tuple(rand_chunks(rng, n) for n in a.shape))

    res = cconv.convolution_double_backward(ch(ggI), ggW, ggb, ch(gO), w, ch(x), *args, (True, True, True))
    assert [r is None for r in res] == [r is None for r in ref]
    got = dask.compute(*res, scheduler="threads" if seed % 2 else "sync")
    reds = (case.red_len_input() * 4, case.red_len_input(), case.red_len_weight())
    for g, r, red in zip(got, ref, reds):
        if r is None:
            continue
        assert g.shape == r.shape and g.dtype == r.dtype
        assert_close(g, r, dtype, red)


def test_grad_input_chunked_like_input_and_bit_identical_batches():
    rng = np.random.default_rng(31)
    x = randn(rng, (6, 4, 20, 20), np.float64)
    w = randn(rng, (5, 4, 3, 3), np.float64)
    gy = randn(rng, (6, 5, 20, 20), np.float64)
    xd = da.from_array(x, chunks=(2, (1, 3), (7, 13), 20))
    gi, gw, gb = cconv.convolution_backward(gy, xd, w, [5], 1, 1, 1, False, 0, 1, (True, True, True))
    assert gi.chunks == xd.chunks
    assert gw.chunks == tuple((n,) for n in w.shape) and gb.chunks == ((5,),)
    r = cconv.convolution_backward(gy, x, w, [5], 1, 1, 1, False, 0, 1, (True, True, True))
    out = dask.compute(gi, gw, gb, scheduler="sync")
    for a, b in zip(out, r):
        assert_close(a, b, np.float64)


def test_weight_and_bias_sums_fixed_order():
    """grad_weight and grad_bias are the same bits whatever the scheduler,
    its number of threads or the order blocks finish in (cconv's own
    threads held at one, as they may change a kernel's sums)."""
    rng = np.random.default_rng(41)
    x = randn(rng, (8, 6, 40, 36), np.float32)
    w = randn(rng, (6, 3, 3, 3), np.float32)
    gy = randn(rng, (8, 6, 20, 18), np.float32)
    xd = da.from_array(x, chunks=(2, 3, 9, 11))
    gyd = da.from_array(gy, chunks=(3, 2, 7, 5))
    _, gw, gb = cconv.convolution_backward(gyd, xd, w, [6], 2, 1, 1, False, 0, 2, (False, True, True))
    n = cconv.get_num_threads()
    cconv.set_num_threads(1)
    try:
        first = dask.compute(gw, gb, scheduler="sync")
        for sched, workers in (("sync", None), ("threads", 2), ("threads", 7), ("threads", 7), ("threads", 3)):
            with dask.config.set(num_workers=workers):
                again = dask.compute(gw, gb, scheduler=sched)
            for a, b in zip(again, first):
                assert a.tobytes() == b.tobytes()
    finally:
        cconv.set_num_threads(n)
    ref = cconv.convolution_backward(gy, x, w, [6], 2, 1, 1, False, 0, 2, (False, True, True))
    assert_close(first[0], ref[1], np.float32, 8 * 20 * 18)
    assert_close(first[1], ref[2], np.float32, 8 * 20 * 18)


def test_tree_sum_order_is_the_graph_s():
    """The additions of the partial sums: a tree of fan-in 8 in block order;
    each node adds its operands left to right."""
    from cconv._dask import _graph

    layer: dict = {}
    refs = [_graph.TaskRef(("p", i)) for i in range(20)]
    root = _graph.tree_sum(layer, "t", refs)
    lvl0 = sorted(k for k in layer if k[0] == "t-sum0")
    assert len(lvl0) == 3 and [len(layer[k].args) - 1 for k in lvl0] == [8, 8, 4]
    assert [a.key for a in layer[("t-sum0", 0)].args[1:]] == [("p", i) for i in range(8)]
    assert root.key == ("t-sum1", 0)
    vals = [np.float32(v) for v in (1e8, 1.0, -1e8, 1.0)]
    assert _graph.add_in_order(None, *vals) == np.float32(1.0)   # ((1e8 + 1) - 1e8) + 1, in that order


def test_double_backward_lazy():
    rng = np.random.default_rng(51)
    x = da.from_array(randn(rng, (2, 3, 10, 10), np.float32), chunks=(1, 3, 5, 5))
    w = randn(rng, (4, 3, 3, 3), np.float32)
    gO = da.from_array(randn(rng, (2, 4, 10, 10), np.float32), chunks=(1, 4, 5, 5))
    res = cconv.convolution_double_backward(x, w, None, gO, w, x, 1, 1, 1, False, 0, 1, (True, True, True))
    assert all(isinstance(r, da.Array) for r in res)


# --------------------------------------------------------------------------
# bad arguments
# --------------------------------------------------------------------------
def _x():
    return da.ones((2, 3, 8, 8), chunks=(1, 3, 4, 4), dtype=np.float32)


def _w():
    return np.ones((4, 3, 3, 3), np.float32)


def test_out_is_rejected():
    with pytest.raises(TypeError, match="out="):
        cconv.conv2d(_x(), _w(), out=np.empty((2, 4, 6, 6), np.float32))
    with pytest.raises(TypeError, match="out="):
        cconv.conv_transpose2d(_x(), np.ones((3, 2, 3, 3), np.float32), out=da.zeros((2, 2, 10, 10)))
    with pytest.raises(TypeError, match="out"):   # a dask out= for NumPy arrays: the NumPy path's error
        cconv.conv2d(np.ones((2, 3, 8, 8), np.float32), _w(), out=da.zeros((2, 4, 6, 6), dtype=np.float32))


class _FakeCupy:
    """An object that cconv takes for a cupy.ndarray (by its type's module)."""

    shape = (4, 3, 3, 3)
    ndim = 4
    dtype = np.dtype(np.float32)


_FakeCupy.__name__ = "ndarray"
_FakeCupy.__module__ = "cupy"


def test_cupy_mixed_with_dask_is_a_type_error():
    with pytest.raises(TypeError, match="cupy.ndarray.*weight"):
        cconv.conv2d(_x(), _FakeCupy())
    with pytest.raises(TypeError, match="cupy"):
        cconv.convolution_backward(_x(), _x(), _FakeCupy(), None, 1, 0, 1, False, 0, 1, (True, True, True))


def test_non_numpy_chunks_rejected():
    x = da.ma.masked_equal(_x(), 0.0)
    with pytest.raises(TypeError, match="input is a dask array of numpy.ma.*MaskedArray chunks"):
        cconv.conv2d(x, _w())


def test_unknown_chunk_sizes_name_the_axis():
    x = _x()
    xu = x[x[:, 0, 0, 0] > 0]           # batch chunk sizes unknown
    msg = r"input has unknown chunk sizes along axis 0, batch.*compute_chunk_sizes"
    with pytest.raises(ValueError, match=msg):
        cconv.conv2d(xu, _w())
    v = da.ones((3, 40), chunks=(3, 10), dtype=np.float32)
    vu = v[:, v[0] > 0]                 # spatial chunk sizes unknown, unbatched input
    with pytest.raises(ValueError, match="along axis 1, spatial"):
        cconv.conv1d(vu, np.ones((2, 3, 3), np.float32))
    gy = da.ones((2, 4, 6, 6), chunks=2, dtype=np.float32)
    gyu = gy[gy[:, 0, 0, 0] > 0]
    with pytest.raises(ValueError, match="grad_output has unknown chunk sizes along axis 0"):
        cconv.convolution_backward(gyu, _x(), _w(), None, 1, 0, 1, False, 0, 1, (True, True, True))


def _same_error(f_np, f_dask):
    with pytest.raises((TypeError, ValueError)) as e_np:
        f_np()
    with pytest.raises(type(e_np.value)) as e_dask:
        f_dask()
    assert str(e_dask.value) == str(e_np.value)


@pytest.mark.parametrize("bad", [
    dict(weight=np.ones((4, 2, 3, 3), np.float32)),                        # channels
    dict(weight=np.ones((4, 3, 3, 3), np.float64)),                        # dtype
    dict(weight=np.ones((4, 3, 9, 9), np.float32)),                        # kernel larger than the input
    dict(stride=0), dict(padding=-1), dict(dilation=(1, 2, 3)), dict(groups=2),
    dict(padding="same", stride=2), dict(bias=np.ones(3, np.float32)),
    dict(padding="full"),
])
def test_forward_errors_are_the_numpy_path_s(bad):
    kw = dict(weight=_w(), bias=None, stride=1, padding=0, dilation=1, groups=1)
    kw.update(bad)
    xn = np.ones((2, 3, 8, 8), np.float32)
    _same_error(lambda: cconv.conv2d(xn, **kw), lambda: cconv.conv2d(_x(), **kw))


def test_int_input_is_a_type_error():
    xi = da.ones((2, 3, 8, 8), chunks=4, dtype=np.int32)
    _same_error(lambda: cconv.conv2d(np.ones((2, 3, 8, 8), np.int32), np.ones((4, 3, 3, 3), np.int32)),
                lambda: cconv.conv2d(xi, np.ones((4, 3, 3, 3), np.int32)))


@pytest.mark.parametrize("bad", [
    dict(grad_output=np.ones((2, 4, 5, 5), np.float32)),                   # wrong grad_output shape
    dict(output_mask=(True, True)), dict(output_mask="yes"),
    dict(bias_sizes=[3]), dict(output_padding=1), dict(transposed="no"),
])
def test_backward_errors_are_the_numpy_path_s(bad):
    kw = dict(grad_output=np.ones((2, 4, 6, 6), np.float32), bias_sizes=None, stride=1, padding=0,
              dilation=1, transposed=False, output_padding=0, groups=1, output_mask=(True, True, True))
    kw.update(bad)
    xn = np.ones((2, 3, 8, 8), np.float32)

    def call(x, gy):
        k = dict(kw)
        k.pop("grad_output")
        return cconv.convolution_backward(gy, x, _w(), k.pop("bias_sizes"), k.pop("stride"), k.pop("padding"),
                                          k.pop("dilation"), k.pop("transposed"), k.pop("output_padding"),
                                          k.pop("groups"), k.pop("output_mask"))

    gyn = kw["grad_output"]
    _same_error(lambda: call(xn, gyn), lambda: call(_x(), da.from_array(gyn, chunks=2)))


def test_helper_and_double_backward_errors():
    gyn = np.ones((2, 4, 6, 6), np.float32)
    gyd = da.from_array(gyn, chunks=3)
    _same_error(lambda: cconv.grad.conv2d_input((8, 8), _w(), gyn),
                lambda: cconv.grad.conv2d_input((8, 8), _w(), gyd))
    _same_error(lambda: cconv.grad.conv2d_weight(np.ones((2, 3, 8, 8), np.float32), (4, 3, 3), gyn),
                lambda: cconv.grad.conv2d_weight(_x(), (4, 3, 3), gyd))
    xn = np.ones((2, 3, 8, 8), np.float32)
    _same_error(
        lambda: cconv.convolution_double_backward(np.ones((2, 3, 8, 7), np.float32), None, None, gyn, _w(), xn,
                                                  1, 0, 1, False, 0, 1, (True, True, True)),
        lambda: cconv.convolution_double_backward(da.ones((2, 3, 8, 7), dtype=np.float32), None, None, gyd, _w(),
                                                  _x(), 1, 0, 1, False, 0, 1, (True, True, True)))


def test_dask_not_imported_for_numpy_calls():
    code = (
        "import sys, numpy as np, cconv\n"
        "x = np.ones((1, 2, 5, 5), np.float32); w = np.ones((2, 2, 3, 3), np.float32)\n"
        "y = cconv.conv2d(x, w); cconv.conv1d([[1.0, 2.0]], [[[1.0]]])\n"
        "cconv.convolution_backward(y, x, w, None, 1, 0, 1, False, 0, 1, (True, True, True))\n"
        "cconv.grad.conv2d_input(x.shape, w, y)\n"
        "print(sorted(m for m in sys.modules if m == 'dask' or m.startswith('dask.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
