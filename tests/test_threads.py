"""Threads: concurrent calls from Python threads give the results of serial
calls, bit for bit (the GIL is released around the kernels and the scratch
memory is per thread); empty_cache() from another thread in the middle of
them is harmless; threadpoolctl sees cconv's OpenMP pool and its limits are
respected (the kernels run on OpenMP threads, as many as
cconv.set_num_threads or OMP_NUM_THREADS says)."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

import cconv
from cconv import Backend

from reference import ref_conv, ref_conv_transpose


def _cases():
    rng = np.random.default_rng(7)
    f32 = np.float32
    c = []
    # (function, x, w, bias, kwargs, backend)
    x = rng.standard_normal((2, 8, 20, 20)).astype(f32)
    w = rng.standard_normal((8, 1, 3, 3)).astype(f32)
    c.append(("conv2d", x, w, None, dict(padding=1, groups=8), Backend.DEPTHWISE))
    c.append(("conv2d", x, w, None, dict(padding=1, groups=8), Backend.WINOGRAD_DEPTHWISE_3X3))
    x = rng.standard_normal((2, 6, 15, 15))
    w = rng.standard_normal((4, 6, 3, 3))
    c.append(("conv2d", x, w, rng.standard_normal(4), dict(stride=2, padding=1), Backend.GEMM))
    x = rng.standard_normal((3, 6, 9)).astype(f32)
    w = rng.standard_normal((6, 4, 5)).astype(f32)
    c.append(("conv_transpose1d", x, w, None, dict(stride=2, groups=2), Backend.GEMM_TRANSPOSE))
    x = (rng.standard_normal((1, 4, 6, 6, 6)) + 1j * rng.standard_normal((1, 4, 6, 6, 6))).astype(np.complex64)
    w = (rng.standard_normal((4, 2, 3, 3, 3)) + 1j * rng.standard_normal((4, 2, 3, 3, 3))).astype(np.complex64)
    c.append(("conv3d", x, w, None, dict(groups=2, padding=1), None))
    x = rng.standard_normal((2, 16, 12, 12)).astype(f32)
    xc = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)  # channels-last
    w = rng.standard_normal((16, 2, 3, 3)).astype(f32)
    c.append(("conv2d", xc, w, None, dict(padding=1, groups=8), None))
    return c


def _in_threads(worker, n):
    """Run worker(0), ..., worker(n - 1) in n threads at once; the exceptions
    they raised (a thread's exception would otherwise only be printed)."""
    raised = []

    def guarded(seed):
        try:
            worker(seed)
        except Exception as e:
            raised.append(repr(e))

    threads = [threading.Thread(target=guarded, args=(s,)) for s in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return raised


def _call(case):
    fn, x, w, b, kw, be = case
    return getattr(cconv, fn)(x, w, b, backend=be, **kw)


def _grads(case, gy):
    fn, x, w, b, kw, be = case
    return cconv.convolution_backward(
        gy, x, w, None, kw.get("stride", 1), kw.get("padding", 0), 1, fn.startswith("conv_t"),
        0, kw.get("groups", 1), [True, True, True])


def test_concurrent_calls_match_serial_calls():
    cases = _cases()
    fwd = [_call(c) for c in cases]
    for c, y in zip(cases, fwd):  # the serial results are right to begin with
        fn, x, w, b, kw, be = c
        if fn.startswith("conv_t"):
            ref = ref_conv_transpose(x, w, b, **kw)
        else:
            ref = ref_conv(x, w, b, stride=kw.get("stride", 1), pad_before=kw.get("padding", 0),
                           groups=kw.get("groups", 1))
        tol = 1e-4 if np.dtype(x.dtype) in (np.float32, np.complex64) else 1e-10
        assert np.linalg.norm(y - ref) <= tol * np.linalg.norm(ref), fn
    bwd = [_grads(c, y) for c, y in zip(cases, fwd)]
    errors = []
    start = threading.Barrier(6)

    def worker(seed):
        r = random.Random(seed)
        start.wait()
        for _ in range(40):
            i = r.randrange(len(cases))
            y = _call(cases[i])
            if not np.array_equal(y, fwd[i]):
                errors.append(("forward", i))
            if r.random() < 0.3:
                got = _grads(cases[i], fwd[i])
                if not all(np.array_equal(a, e) for a, e in zip(got, bwd[i])):
                    errors.append(("backward", i))
            if seed == 0 and r.random() < 0.2:
                cconv.empty_cache()  # while other threads are inside kernels

    errors += [("raised", e) for e in _in_threads(worker, 6)]
    assert errors == []


def test_concurrent_benchmark_mode_calls():
    # the autotune cache is filled from several threads at once
    cases = _cases()[2:4]
    serial = [getattr(cconv, c[0])(c[1], c[2], c[3], **c[4]) for c in cases]
    errors = []
    with cconv.benchmark(True):
        def worker(seed):
            r = random.Random(seed)
            for _ in range(6):
                i = r.randrange(len(cases))
                fn, x, w, b, kw, _ = cases[i]
                y = getattr(cconv, fn)(x, w, b, **kw)
                tol = 1e-5 if x.dtype == np.float32 else 1e-12
                if not np.allclose(y, serial[i], rtol=tol, atol=tol * np.abs(serial[i]).max()):
                    errors.append(i)

        errors += _in_threads(worker, 4)
    assert errors == []


def test_threadpoolctl_sees_and_limits_the_openmp_pool():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = cconv.get_num_threads()
    try:
        cconv.set_num_threads(2)
        apis = {i["user_api"] for i in threadpoolctl.threadpool_info()}
        assert "openmp" in apis, apis
        omp = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "openmp"]
        assert all(i["num_threads"] == 2 for i in omp), omp
        with threadpoolctl.threadpool_limits(1):
            assert cconv.get_num_threads() == 1
            x = np.ones((2, 4, 8, 8), np.float32)
            w = np.ones((4, 4, 3, 3), np.float32)
            assert cconv.conv2d(x, w).shape == (2, 4, 6, 6)
        assert cconv.get_num_threads() == 2
        with threadpoolctl.threadpool_limits(1, user_api="openmp"):
            assert cconv.get_num_threads() == 1
        assert cconv.get_num_threads() == 2
    finally:
        cconv.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -1])
def test_set_num_threads_rejects_non_positive(bad):
    with pytest.raises(ValueError, match="thread"):
        cconv.set_num_threads(bad)


@pytest.mark.parametrize("bad", [True, np.bool_(True), False])
def test_set_num_threads_rejects_bools(bad):
    # PyTorch refuses a bool; True is no thread count even though it is an int
    with pytest.raises(TypeError, match="int"):
        cconv.set_num_threads(bad)


@pytest.mark.parametrize("bad", [2**31, 2**63, 2**80])
def test_set_num_threads_rejects_counts_past_a_c_int(bad):
    # a ValueError naming the limit (was OverflowError from the OpenMP call)
    before = cconv.get_num_threads()
    with pytest.raises(ValueError, match="too large"):
        cconv.set_num_threads(bad)
    assert cconv.get_num_threads() == before


def test_kernels_release_the_gil():
    # a Python thread keeps running while another thread is inside a long
    # kernel: the longest pause it sees is far shorter than the kernel (a
    # kernel holding the GIL would stall it for the whole call, every time;
    # up to three attempts absorb a stall of the host's own making)
    import time

    x = np.ones((1, 64, 256, 256), np.float32)  # >= 20 ms on one thread of a fast core
    w = np.ones((64, 64, 3, 3), np.float32)
    before = cconv.get_num_threads()
    cconv.set_num_threads(1)
    results = []
    try:
        for _ in range(3):
            t0 = time.perf_counter()
            cconv.conv2d(x, w, padding=1)
            single = time.perf_counter() - t0
            done = threading.Event()

            def run():
                cconv.conv2d(x, w, padding=1)
                done.set()

            th = threading.Thread(target=run)
            last = time.perf_counter()
            gap = 0.0
            th.start()
            while not done.is_set():
                now = time.perf_counter()
                gap = max(gap, now - last)
                last = now
            th.join()
            results.append((gap, single))
            if single > 0.02 and gap < 0.5 * single:
                break
    finally:
        cconv.set_num_threads(before)
    gap, single = results[-1]
    assert single > 0.02, f"the kernel took {single * 1e3:.1f} ms: too short to tell"
    assert gap < 0.5 * single, "the other thread stalled for most of the kernel: " + ", ".join(
        f"{g * 1e3:.1f} of {t * 1e3:.1f} ms" for g, t in results)
