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
    # kernel holding the GIL would stall it for the whole call, every time).
    # The problem grows (batch doubled) until a call takes >= 30 ms whatever
    # the core's speed and the load beside it (a timing that a busy host
    # stretched is not trusted: every attempt times the call again); up to
    # three stall measurements absorb a stall of the host's own making.
    import time

    w = np.ones((64, 64, 3, 3), np.float32)
    before = cconv.get_num_threads()
    cconv.set_num_threads(1)
    results = []
    x = np.ones((2, 64, 128, 128), np.float32)
    try:
        for _ in range(12):
            t0 = time.perf_counter()
            cconv.conv2d(x, w, padding=1)
            single = time.perf_counter() - t0
            if single < 0.03:
                if x.shape[0] < 256:
                    x = np.ones((2 * x.shape[0],) + x.shape[1:], np.float32)
                continue
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
            if gap < 0.5 * single or len(results) == 3:
                break
    finally:
        cconv.set_num_threads(before)
    assert results, f"no call took 30 ms (batch {x.shape[0]}, last {single * 1e3:.1f} ms)"
    gap, single = results[-1]
    assert gap < 0.5 * single, "the other thread stalled for most of the kernel: " + ", ".join(
        f"{g * 1e3:.1f} of {t * 1e3:.1f} ms" for g, t in results)


# --------------------------------------------------------------------------
# the caches under concurrent configuration changes
# --------------------------------------------------------------------------
def _bit_cases():
    """Problems on a forced backend (benchmark mode leaves them alone), so
    their results are the same bits whatever the configuration."""
    rng = np.random.default_rng(11)
    f32 = np.float32
    c = []
    x = rng.standard_normal((2, 16, 24, 24)).astype(f32)
    c.append(("conv2d", x, rng.standard_normal((32, 16, 3, 3)).astype(f32), None, dict(padding=1),
              Backend.GEMM))
    c.append(("conv2d", x, rng.standard_normal((8, 16, 1, 1)).astype(f32),
              rng.standard_normal(8).astype(f32), {}, Backend.GEMM_1X1))
    x = rng.standard_normal((1, 12, 30))
    c.append(("conv_transpose1d", x, rng.standard_normal((12, 6, 4)), None, dict(stride=2, groups=3),
              Backend.GEMM_TRANSPOSE))
    x = rng.standard_normal((2, 8, 20, 20)).astype(f32)
    c.append(("conv2d", x, rng.standard_normal((8, 1, 3, 3)).astype(f32), None, dict(padding=1, groups=8),
              Backend.DEPTHWISE))
    x = rng.standard_normal((1, 4, 6, 7, 8))
    c.append(("conv3d", x, rng.standard_normal((6, 4, 2, 2, 2)), None, dict(stride=(1, 2, 1)), Backend.GEMM))
    return c


def _bit_grads(case, gy):
    fn, x, w, b, kw, be = case
    return cconv.convolution_backward(
        gy, x, w, None, kw.get("stride", 1), kw.get("padding", 0), 1, fn.startswith("conv_t"),
        0, kw.get("groups", 1), [True, True, True], backend=be)


def test_eight_threads_with_config_changes_match_serial_calls(restore_threads):
    # seven threads call convolutions and gradients while some also call
    # empty_cache, set_num_threads and set_benchmark: the results are the
    # serial ones, bit for bit (results do not depend on the thread count);
    # the eighth calls the default choice under benchmark mode meanwhile
    # (which fills and reads the measured winners), right to a tolerance
    cases = _bit_cases()
    fwd = [_call(c) for c in cases]
    bwd = [_bit_grads(c, y) for c, y in zip(cases, fwd)]
    errors = []
    start = threading.Barrier(8)

    def worker(seed):
        r = random.Random(seed)
        start.wait()
        for _ in range(30):
            i = r.randrange(len(cases))
            if seed == 7:  # benchmark mode's winners, from several problems
                fn, x, w, b, kw, _ = cases[i]
                with cconv.benchmark():
                    y = getattr(cconv, fn)(x, w, b, **kw)
                tol = 1e-4 if x.dtype == np.float32 else 1e-10
                if not np.allclose(y, fwd[i], rtol=tol, atol=tol * np.abs(fwd[i]).max()):
                    errors.append(("benchmark", i))
                continue
            if not np.array_equal(_call(cases[i]), fwd[i]):
                errors.append(("forward", seed, i))
            if r.random() < 0.3:
                got = _bit_grads(cases[i], fwd[i])
                if not all(np.array_equal(a, e) for a, e in zip(got, bwd[i])):
                    errors.append(("backward", seed, i))
            u = r.random()
            if seed == 1 and u < 0.3:
                cconv.empty_cache()
            elif seed == 2 and u < 0.3:
                cconv.set_num_threads(r.choice([1, 2, 3]))
            elif seed == 3 and u < 0.3:
                cconv.set_benchmark(r.random() < 0.5)

    try:
        errors += [("raised", e) for e in _in_threads(worker, 8)]
    finally:
        cconv.set_benchmark(False)
    assert errors == []


def test_empty_cache_in_one_thread_does_not_grow_another_threads_scratch():
    # after empty_cache elsewhere, a thread's next call allocates what it
    # needs again; it grew 1.5x from the released buffer each time, until
    # MemoryError (x=(1,64,56,56), w=(64,64,3,3), stride 2, GEMM)
    from cconv import _config

    x = np.ones((1, 64, 56, 56), np.float32)
    w = np.ones((64, 64, 3, 3), np.float32)
    sizes = []
    go, done = threading.Event(), threading.Event()

    def other():
        for _ in range(60):
            go.wait()
            go.clear()
            cconv.conv2d(x, w, stride=2, backend="gemm")
            buf = getattr(_config._tls, "buf", None)
            sizes.append(0 if buf is None else buf.nbytes)
            done.set()

    th = threading.Thread(target=other)
    th.start()
    try:
        for _ in range(60):
            cconv.empty_cache()
            done.clear()
            go.set()
            assert done.wait(60)
    finally:
        th.join()
    assert len(sizes) == 60
    assert max(sizes) == min(sizes), sizes[:5]


def test_benchmark_cache_is_bounded_and_least_recently_used(monkeypatch):
    from cconv import _autotune, _dispatch

    monkeypatch.setattr(_dispatch, "TUNED_MAX", 4)
    _autotune.clear()
    w = np.ones((2, 2, 1, 3), np.float32)
    with cconv.benchmark():
        for n in range(1, 7):
            cconv.conv2d(np.ones((1, 2, 1, n + 2), np.float32), w)
            if n == 4:  # the first problem used again: it stays, the second goes
                cconv.conv2d(np.ones((1, 2, 1, 3), np.float32), w)
    assert len(_dispatch._tuned) == 4
    widths = sorted(k[0].p.in_size[-1] for k in _dispatch._tuned)
    assert widths == [3, 6, 7, 8], widths
    _autotune.clear()


# every public entry point, at an absurd thread count: clamped, no crash
_ENTRY_POINTS = {
    "conv1d": lambda: cconv.conv1d(np.ones((2, 8, 300), np.float32), np.ones((16, 8, 3), np.float32)),
    "conv2d": lambda: cconv.conv2d(np.ones((2, 16, 40, 40), np.float32), np.ones((16, 16, 3, 3), np.float32),
                                   padding=1),
    "conv2d_1x1": lambda: cconv.conv2d(np.ones((4, 64, 20, 20)), np.ones((32, 64, 1, 1))),
    "depthwise": lambda: cconv.conv2d(np.ones((2, 32, 40, 40), np.float32), np.ones((32, 1, 3, 3), np.float32),
                                      padding=1, groups=32),
    "winograd_dw": lambda: cconv.conv2d(np.ones((2, 32, 40, 40), np.float32),
                                        np.ones((32, 1, 3, 3), np.float32), padding=1, groups=32,
                                        backend="winograd_depthwise_3x3"),
    "conv3d": lambda: cconv.conv3d(np.ones((1, 8, 12, 12, 12)), np.ones((8, 8, 3, 3, 3))),
    "channels_last": lambda: cconv.conv2d(np.ones((2, 30, 30, 16), np.float32).transpose(0, 3, 1, 2),
                                          np.ones((16, 16, 3, 3), np.float32)),
    "conv_transpose2d": lambda: cconv.conv_transpose2d(np.ones((2, 16, 20, 20), np.float32),
                                                       np.ones((16, 8, 4, 4), np.float32), stride=2),
    "convolution": lambda: cconv.convolution(np.ones((2, 8, 30)), np.ones((8, 4, 3)), None, 1, 0, 1, True, 0, 2),
    "backward": lambda: cconv.convolution_backward(
        np.ones((2, 16, 38, 38), np.float32), np.ones((2, 8, 40, 40), np.float32),
        np.ones((16, 8, 3, 3), np.float32), [16], 1, 0, 1, False, 0, 1, [True, True, True]),
    "grad_bias": lambda: cconv.convolution_backward(
        np.ones((2, 64, 38, 38), np.float32), np.ones((2, 8, 40, 40), np.float32),
        np.ones((64, 8, 3, 3), np.float32), [64], 1, 0, 1, False, 0, 1, [False, False, True]),
    "grad_bias_f64": lambda: cconv.convolution_backward(
        np.ones((2, 64, 38, 38)), np.ones((2, 8, 40, 40)), np.ones((64, 8, 3, 3)), [64], 1, 0, 1, False, 0, 1,
        [False, False, True]),
    "depthwise_backward": lambda: cconv.convolution_backward(
        np.ones((2, 32, 40, 40), np.float32), np.ones((2, 32, 40, 40), np.float32),
        np.ones((32, 1, 3, 3), np.float32), None, 1, 1, 1, False, 0, 32, [True, True, False]),
    "double_backward": lambda: cconv.convolution_double_backward(
        np.ones((2, 8, 20, 20)), np.ones((8, 8, 3, 3)), np.ones(8), np.ones((2, 8, 18, 18)),
        np.ones((8, 8, 3, 3)), np.ones((2, 8, 20, 20)), 1, 0, 1, False, 0, 1, [True, True, True]),
    "grad_helpers": lambda: (cconv.grad.conv2d_input((2, 8, 20, 20), np.ones((8, 8, 3, 3)),
                                                     np.ones((2, 8, 18, 18))),
                             cconv.grad.conv2d_weight(np.ones((2, 8, 20, 20)), (8, 8, 3, 3),
                                                      np.ones((2, 8, 18, 18)))),
    "complex": lambda: cconv.conv1d(np.ones((2, 4, 50), np.complex64), np.ones((4, 4, 3), np.complex64)),
    "float16": lambda: cconv.conv2d(np.ones((2, 4, 20, 20), np.float16), np.ones((4, 4, 3, 3), np.float16)),
}


@pytest.mark.parametrize("count", [10**5, 2**31 - 1])
def test_absurd_thread_counts_are_clamped_in_every_entry_point(count, restore_threads):
    # CCONV_GRAIN_SCALE=0 would thread even these small calls; at the
    # measured grains some run on one thread anyway: the clamp is in
    # cc_threads_for, which every driver asks
    from cconv import _config, _kernels

    ref = {name: f() for name, f in _ENTRY_POINTS.items()}
    cconv.set_num_threads(count)
    assert cconv.get_num_threads() == _kernels.thread_cap() == _config._CAP
    for name, f in _ENTRY_POINTS.items():
        got = f()
        got = got if isinstance(got, tuple) else (got,)
        want = ref[name] if isinstance(ref[name], tuple) else (ref[name],)
        for a, b in zip(got, want):
            assert (a is None and b is None) or np.array_equal(a, b), name


def test_absurd_thread_counts_in_a_process_that_splits_everything(tmp_path):
    # the same with every call split and threaded (grain scale 0), in a child
    import os
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, %r)\n" % os.path.dirname(os.path.abspath(__file__)) +
            "import cconv, numpy as np, test_threads as t\n"
            "ref = {n: f() for n, f in t._ENTRY_POINTS.items()}\n"
            "cconv.set_num_threads(10**5)\n"
            "for n, f in t._ENTRY_POINTS.items():\n"
            "    g = f(); g = g if isinstance(g, tuple) else (g,)\n"
            "    r = ref[n] if isinstance(ref[n], tuple) else (ref[n],)\n"
            "    assert all(np.array_equal(a, b) for a, b in zip(g, r)), n\n"
            "print('ok', cconv.get_num_threads())\n")
    env = dict(os.environ, CCONV_GRAIN_SCALE="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


# ---- the owner-first claims of the kernels' work items (core/claim.h) -------

import c_programs  # noqa: E402


@pytest.mark.skipif(c_programs.missing("native") is not None,
                    reason=str(c_programs.missing("native")))
def test_claims_c_native():
    """Every item claimed once by teams smaller and larger than the ranges'
    cut, a stopped thread's range finished by the others, a lone thread's
    claims in range order (tests/c/claim_check.c)."""
    c_programs.run("claim_check", "native", "300", "1")


@pytest.mark.skipif(c_programs.missing("asan") is not None,
                    reason=str(c_programs.missing("asan")))
def test_claims_c_asan():
    c_programs.run("claim_check", "asan", "100", "2")
