"""The cache of freed result blocks (src/core/outbuf.c, cconv/_outbuf.pyx).

Results are allocated through a NumPy memory handler that keeps freed
blocks of >= 128 KiB for the next result of about their size.  A reused
block holds the old contents, so every kernel must write every element of
its result: the tests here fill the cache with NaN blocks of the sizes a
call will ask for and check the call against the float64 reference."""

import gc
import threading

import numpy as np
import pytest

import cconv
from cconv import _outbuf
from reference import (
    ref_conv, ref_conv_grad_input, ref_conv_grad_weight, ref_conv_transpose, rel_err, tolerance,
)

MIN = 128 << 10


def _handler_name(a):
    for mod in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            m = __import__(mod, fromlist=["get_handler_name"])
            return m.get_handler_name(a)
        except (ImportError, AttributeError):
            continue
    pytest.skip("numpy has no get_handler_name")


@pytest.fixture(autouse=True)
def _empty_cache():
    cconv.empty_cache()
    yield
    cconv.empty_cache()


def _poison(nbytes_list, copies=3):
    """Leave `copies` NaN-filled blocks of each size in the cache; their
    addresses."""
    keep = []
    for nb in nbytes_list:
        for _ in range(copies):
            a = _outbuf.empty((max(int(nb), 1),), np.uint8)
            a.fill(0xFF)  # all-ones bytes: NaN in float32/64/16
            keep.append(a)
    addrs = {a.ctypes.data for a in keep}
    del keep, a
    gc.collect()
    return addrs


def _start(a):
    """Address of the first byte of `a`'s memory (any strides)."""
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a.ctypes.data


def _sizes(shape, dtype):
    nb = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return [nb, nb // 2, nb * 2]


def test_results_use_the_handler_and_the_default_is_restored():
    x = np.ones((2, 8, 64, 64), np.float32)
    w = np.ones((16, 8, 3, 3), np.float32)
    y = cconv.conv2d(x, w, padding=1)
    assert _handler_name(y) == "cconv_outbuf"
    assert y.flags.owndata and y.flags.c_contiguous and y.flags.writeable
    assert _handler_name(np.empty(10)) != "cconv_outbuf"
    assert _handler_name(np.empty((256, 1024))) != "cconv_outbuf"


def test_freed_result_is_reused_and_empty_cache_releases():
    x = np.random.default_rng(0).standard_normal((1, 16, 64, 64)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 16, 3, 3)).astype(np.float32)
    y = cconv.conv2d(x, w, padding=1)
    ref = y.copy()
    addr = y.ctypes.data
    assert _outbuf.stats() == (0, 0)
    del y
    gc.collect()
    nbytes, blocks = _outbuf.stats()
    assert blocks == 1 and nbytes == ref.nbytes
    y2 = cconv.conv2d(x, w, padding=1)
    assert y2.ctypes.data == addr  # the same pages again
    assert _outbuf.stats() == (0, 0)
    np.testing.assert_array_equal(y2, ref)
    del y2
    gc.collect()
    assert _outbuf.stats()[1] == 1
    cconv.empty_cache()
    assert _outbuf.stats() == (0, 0)


def test_small_blocks_are_not_kept():
    y = cconv.conv1d(np.ones((1, 2, 30), np.float32), np.ones((3, 2, 3), np.float32))
    assert y.nbytes < MIN
    del y
    gc.collect()
    assert _outbuf.stats() == (0, 0)


def test_size_window():
    """A block serves requests from 3/4 of its size up to its size."""
    a = _outbuf.empty((1 << 20,), np.uint8)
    addr = a.ctypes.data
    del a
    gc.collect()
    big = _outbuf.empty(((1 << 20) + 1,), np.uint8)  # larger: a fresh block
    assert big.ctypes.data != addr
    small = _outbuf.empty((700 << 10,), np.uint8)    # < 3/4: a fresh block
    assert small.ctypes.data != addr
    ok = _outbuf.empty((800 << 10,), np.uint8)       # >= 3/4: reused
    assert ok.ctypes.data == addr


def test_bounds():
    assert (_outbuf.MIN_BYTES, _outbuf.MAX_BYTES, _outbuf.CAP_BYTES, _outbuf.SLOTS) == (
        MIN, 64 << 20, 128 << 20, 32)
    arrs = [_outbuf.empty((MIN + i * 4096,), np.uint8) for i in range(80)]
    last = arrs[-1].ctypes.data
    for i in range(len(arrs)):  # freed first to last
        arrs[i] = None
    gc.collect()
    nbytes, blocks = _outbuf.stats()
    assert blocks == _outbuf.SLOTS and nbytes <= _outbuf.CAP_BYTES
    # the oldest went first: the last block freed is still there
    again = _outbuf.empty((MIN + 79 * 4096,), np.uint8)
    assert again.ctypes.data == last
    del again
    big = [_outbuf.empty((60 << 20,), np.uint8) for _ in range(4)]  # 240 MiB in all
    del big
    gc.collect()
    nbytes, blocks = _outbuf.stats()
    assert nbytes <= _outbuf.CAP_BYTES and blocks >= 2
    cconv.empty_cache()
    huge = _outbuf.empty((_outbuf.MAX_BYTES + 1,), np.uint8)  # above the largest: never kept
    del huge
    gc.collect()
    assert _outbuf.stats() == (0, 0)


def test_resize_keeps_contents():
    a = _outbuf.empty((300_000,), np.float64)
    a[:] = np.arange(a.size)
    a.resize((600_000,), refcheck=False)
    np.testing.assert_array_equal(a[:300_000], np.arange(300_000))
    a.resize((200_000,), refcheck=False)
    np.testing.assert_array_equal(a, np.arange(200_000))
    a.resize((10,), refcheck=False)
    np.testing.assert_array_equal(a, np.arange(10))


def _rng(seed):
    return np.random.default_rng(seed)


FORWARD = [
    # (name, fn, x shape, w shape, kwargs)
    ("conv1d", cconv.conv1d, (2, 32, 700), (40, 32, 5), dict(padding=2)),
    ("conv2d", cconv.conv2d, (2, 16, 48, 48), (24, 16, 3, 3), dict(padding=1)),
    ("conv2d_s2", cconv.conv2d, (2, 16, 97, 97), (40, 16, 3, 3), dict(stride=2, padding=1)),
    ("grouped", cconv.conv2d, (2, 32, 40, 40), (32, 4, 3, 3), dict(padding=1, groups=8)),
    ("depthwise", cconv.conv2d, (2, 32, 45, 45), (32, 1, 3, 3), dict(padding=1, groups=32)),
    ("depthwise_s2", cconv.conv2d, (2, 32, 90, 90), (64, 1, 5, 5), dict(stride=2, padding=2, groups=32)),
    ("conv3d", cconv.conv3d, (1, 8, 10, 24, 24), (16, 8, 3, 3, 3), dict(padding=1)),
    ("dilated", cconv.conv2d, (1, 16, 50, 50), (32, 16, 3, 3), dict(padding=2, dilation=2)),
    ("same", cconv.conv2d, (1, 16, 51, 50), (32, 16, 4, 3), dict(padding="same")),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", FORWARD, ids=[c[0] for c in FORWARD])
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_forward_writes_every_element(case, dtype, layout):
    _, fn, xs, ws, kw = case
    rng = _rng(len(xs) * 7 + ws[0])
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    if layout == "channels_last":
        perm = (0,) + tuple(range(2, x.ndim)) + (1,)
        inv = (0, x.ndim - 1) + tuple(range(1, x.ndim - 1))
        x = np.ascontiguousarray(x.transpose(perm)).transpose(inv)
    nd = x.ndim - 2
    pad = kw.get("padding", 0)
    if pad == "same":
        tot = [(k - 1) * kw.get("dilation", 1) for k in ws[2:]]
        pb, pa = [t // 2 for t in tot], [t - t // 2 for t in tot]
    else:
        pb = pa = pad
    ref = ref_conv(x, w, b, stride=kw.get("stride", 1), pad_before=pb, pad_after=pa,
                   dilation=kw.get("dilation", 1), groups=kw.get("groups", 1))
    assert ref.ndim == nd + 2
    backends = [None] + [be for be in ("gemm", "depthwise", "winograd_depthwise_3x3")]
    for be in backends:
        poisoned = _poison(_sizes(ref.shape, dtype))
        try:
            y = fn(x, w, b, backend=be, **kw)
        except ValueError:
            assert be is not None  # a forced backend that does not apply
            continue
        assert _start(y) in poisoned  # the test can fail: y sits on NaNs
        assert not np.isnan(y).any(), f"backend {be}: unwritten elements"
        assert rel_err(y, ref) < tolerance(dtype, w[0].size), f"backend {be}"


def test_transposed_complex_and_half_write_every_element():
    rng = _rng(3)
    x = rng.standard_normal((2, 16, 40, 40)).astype(np.float32)
    w = rng.standard_normal((16, 8, 4, 4)).astype(np.float32)
    ref = ref_conv_transpose(x, w, None, stride=2, padding=1)
    for be in (None, "gemm_transpose"):
        _poison(_sizes(ref.shape, np.float32))
        y = cconv.conv_transpose2d(x, w, stride=2, padding=1, backend=be)
        assert not np.isnan(y).any() and rel_err(y, ref) < 1e-5
    xc = (rng.standard_normal((1, 8, 48, 48)) + 1j * rng.standard_normal((1, 8, 48, 48))).astype(np.complex64)
    wc = (rng.standard_normal((16, 8, 3, 3)) + 1j * rng.standard_normal((16, 8, 3, 3))).astype(np.complex64)
    refc = ref_conv(xc, wc, None, pad_before=1)
    _poison(_sizes(refc.shape, np.complex64))
    yc = cconv.conv2d(xc, wc, padding=1)
    assert not np.isnan(yc).any() and rel_err(yc, refc) < 1e-5
    xh = rng.standard_normal((1, 16, 64, 64)).astype(np.float16)
    wh = (rng.standard_normal((32, 16, 3, 3)) * 0.1).astype(np.float16)
    refh = ref_conv(xh, wh, None, pad_before=1)
    _poison(_sizes(refh.shape, np.float16))
    yh = cconv.conv2d(xh, wh, padding=1)
    assert not np.isnan(yh).any() and rel_err(yh, refh) < 3e-3


@pytest.mark.parametrize("groups", [1, 4, 32])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_writes_every_element(groups, dtype):
    rng = _rng(groups)
    x = rng.standard_normal((2, 32, 36, 36)).astype(dtype)
    w = rng.standard_normal((64, 32 // groups, 3, 3)).astype(dtype)
    gy = rng.standard_normal((2, 64, 18, 18)).astype(dtype)
    args = ([64], (2, 2), (1, 1), (1, 1), False, (0, 0), groups, (True, True, True))
    gi_ref = ref_conv_grad_input(gy, w, x.shape, stride=2, pad_before=1, groups=groups)
    gw_ref = ref_conv_grad_weight(x, gy, w.shape, stride=2, pad_before=1, groups=groups)
    _poison(_sizes(x.shape, dtype) + _sizes(w.shape, dtype))
    gi, gw, gb = cconv.convolution_backward(gy, x, w, *args)
    assert not np.isnan(gi).any() and not np.isnan(gw).any()
    assert rel_err(gi, gi_ref) < tolerance(dtype, 64 * 9)
    assert rel_err(gw, gw_ref) < tolerance(dtype, 2 * 18 * 18)
    np.testing.assert_allclose(gb, gy.sum(axis=(0, 2, 3)), rtol=1e-4)


def test_threads_share_the_cache():
    rng = _rng(9)
    x = rng.standard_normal((1, 16, 64, 64)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    ref = cconv.conv2d(x, w, padding=1).copy()
    errors = []

    def work():
        try:
            for _ in range(60):
                y = cconv.conv2d(x, w, padding=1)
                if not np.array_equal(y, ref):
                    errors.append("mismatch")
                del y
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert _outbuf.stats()[1] <= 32


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_fork_while_other_threads_use_the_cache():
    """A child forked while other threads allocate and free results can
    still use the cache.  The lock is held across fork() by an atfork
    handler, so a child never inherits it locked; with the GIL held around
    every NumPy allocation no other thread can hold it at a fork anyway (this
    passes without the handler too), so what this checks is that the
    handler's lock and unlock around fork() work, in parent and child."""
    import os

    x = np.ones((1, 16, 64, 64), np.float32)
    w = np.ones((16, 16, 3, 3), np.float32)
    # every lazy import first: a fork while another thread holds Python's
    # import lock leaves the child waiting on it forever
    n = cconv.get_num_threads()
    for t in (1, n):
        cconv.set_num_threads(t)
        cconv.conv2d(x, w, padding=1)
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            y = cconv.conv2d(x, w, padding=1)
            del y

    def churn_cache():  # the lock taken as often as possible
        while not stop.is_set():
            a = _outbuf.empty((MIN,), np.uint8)
            del a

    ts = [threading.Thread(target=churn), threading.Thread(target=churn_cache)]
    for t in ts:
        t.start()
    try:
        for _ in range(20):
            pid = os.fork()
            if pid == 0:  # the child: no threads but this one
                code = 1
                try:
                    # one thread: libgomp's pool does not survive fork()
                    cconv.set_num_threads(1)
                    for _ in range(3):
                        y = cconv.conv2d(x, w, padding=1)
                        a = _outbuf.empty((MIN,), np.uint8)
                        del y, a
                    code = 0 if _outbuf.stats()[1] <= _outbuf.SLOTS else 2
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        stop.set()
        for t in ts:
            t.join()


@pytest.mark.parametrize("groups", [1, 4])
def test_double_backward_and_grad_helpers_write_every_element(groups):
    rng = _rng(40 + groups)
    dt = np.float64
    x = rng.standard_normal((2, 16, 40, 40)).astype(dt)
    w = rng.standard_normal((32, 16 // groups, 3, 3)).astype(dt)
    gO = rng.standard_normal((2, 32, 40, 40)).astype(dt)
    ggI = rng.standard_normal(x.shape).astype(dt)
    ggW = rng.standard_normal(w.shape).astype(dt)
    ggb = rng.standard_normal(32).astype(dt)
    kw = dict(pad_before=1, groups=groups)
    ggO_ref = ref_conv(ggI, w, ggb, **kw) + ref_conv(x, ggW, None, **kw)
    gW_ref = ref_conv_grad_weight(ggI, gO, w.shape, **kw)
    gI_ref = ref_conv_grad_input(gO, ggW, x.shape, **kw)
    sizes = _sizes(x.shape, dt) + _sizes(gO.shape, dt) + _sizes(w.shape, dt)
    _poison(sizes)
    ggO, gI, gW = cconv.convolution_double_backward(
        ggI, ggW, ggb, gO, w, x, (1, 1), (1, 1), (1, 1), False, (0, 0), groups, (True, True, True))
    for got, ref in ((ggO, ggO_ref), (gI, gI_ref), (gW, gW_ref)):
        assert not np.isnan(got).any()
        assert rel_err(got, ref) < 1e-12
    _poison(sizes)
    gi = cconv.grad.conv2d_input(x.shape, w, gO, padding=1, groups=groups)
    _poison(sizes)
    gw = cconv.grad.conv2d_weight(x, w.shape, gO, padding=1, groups=groups)
    assert not np.isnan(gi).any() and not np.isnan(gw).any()
    assert rel_err(gi, ref_conv_grad_input(gO, w, x.shape, **kw)) < 1e-12
    assert rel_err(gw, ref_conv_grad_weight(x, gO, w.shape, **kw)) < 1e-12
