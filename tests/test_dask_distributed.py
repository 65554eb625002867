"""cconv on dask arrays computed by a dask.distributed LocalCluster: two
worker processes (started by spawn, so no process inherits OpenMP threads
through fork), the results equal to the NumPy path's and, bit for bit, to
the threaded scheduler's (weight and bias gradients included: their
additions are ordered by the graph).  One small cluster for the module,
closed whatever happens."""
from __future__ import annotations

import logging
import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402

import cconv  # noqa: E402
from reference import assert_close  # noqa: E402
from test_backward import randn  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # a Nanny writes its workers' environment (OMP_NUM_THREADS=1 and the
    # like, dask's distributed.nanny.pre-spawn-environ) into this process's
    # os.environ before it spawns them: put it back afterwards, or every
    # later test's child process would run on one OpenMP thread
    saved = dict(os.environ)
    try:
        yield from _cluster()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _cluster():
    cfg = {
        "distributed.worker.multiprocessing-method": "spawn",
        "distributed.comm.timeouts.connect": "120s",
        "distributed.comm.timeouts.tcp": "120s",
        "distributed.scheduler.work-stealing": True,
    }
    with dask.config.set(cfg):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.ERROR,
                                           worker_class=distributed.Nanny, protocol="tcp://")
        try:
            c = distributed.Client(cluster, timeout="120s")
            try:
                c.wait_for_workers(2, timeout=180)
                # one cconv thread per worker, as in the process that compares
                c.run(cconv.set_num_threads, 1)
                yield c
            finally:
                c.close(timeout=60)
        finally:
            cluster.close(timeout=60)


@pytest.fixture
def one_thread():
    n = cconv.get_num_threads()
    cconv.set_num_threads(1)
    yield
    cconv.set_num_threads(n)


def test_workers_are_separate_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2 and len(set(pids.values())) == 2 and os.getpid() not in pids.values()
    assert all(v == 1 for v in client.run(cconv.get_num_threads).values())


def test_forward_on_cluster(client, one_thread):
    rng = np.random.default_rng(1)
    x = randn(rng, (6, 8, 33, 29), np.float32)
    w = randn(rng, (12, 4, 3, 3), np.float32)
    b = randn(rng, (12,), np.float32)
    wt = randn(rng, (8, 3, 4, 4), np.float32)
    xd = da.from_array(x, chunks=(2, 4, 12, 10))
    ys = [cconv.conv2d(xd, w, b, padding=1, groups=2),
          cconv.conv2d(xd, w, b, stride=2, dilation=2, padding="valid", groups=2),
          cconv.conv_transpose2d(xd, wt, None, stride=2, padding=1, groups=2)]
    refs = [cconv.conv2d(x, w, b, padding=1, groups=2),
            cconv.conv2d(x, w, b, stride=2, dilation=2, groups=2),
            cconv.conv_transpose2d(x, wt, None, stride=2, padding=1, groups=2)]
    got = client.compute(ys, sync=True)
    local = dask.compute(*ys, scheduler="threads")
    for g, loc, r in zip(got, local, refs):
        assert g.shape == r.shape and g.dtype == r.dtype
        assert_close(g, r, np.float32, 4 * 16)
        np.testing.assert_array_equal(g, loc)


def test_backward_on_cluster_is_the_threaded_bits(client, one_thread):
    rng = np.random.default_rng(2)
    x = randn(rng, (8, 6, 30, 26), np.float64)
    w = randn(rng, (9, 2, 3, 3), np.float64)
    gy = randn(rng, (8, 9, 15, 13), np.float64)
    xd = da.from_array(x, chunks=(2, 3, 11, 9))
    gyd = da.from_array(gy, chunks=(3, 9, 6, 13))
    res = cconv.convolution_backward(gyd, xd, w, [9], 2, 1, 1, False, 0, 3, (True, True, True))
    first = client.compute(list(res), sync=True)
    second = client.compute(list(res), sync=True)
    local = dask.compute(*res, scheduler="threads")
    ref = cconv.convolution_backward(gy, x, w, [9], 2, 1, 1, False, 0, 3, (True, True, True))
    assert first[0].shape == x.shape and res[0].chunks == xd.chunks
    for a, b, c, r in zip(first, second, local, ref):
        assert a.tobytes() == b.tobytes() == c.tobytes()
        assert_close(a, r, np.float64)


def test_transposed_backward_and_helper_on_cluster(client):
    rng = np.random.default_rng(3)
    x = randn(rng, (4, 4, 9, 10), np.complex64)
    w = randn(rng, (4, 3, 3, 2), np.complex64)
    y = cconv.conv_transpose2d(x, w, stride=(2, 3), padding=1, output_padding=(1, 2))
    gy = randn(rng, y.shape, np.complex64)
    xd = da.from_array(x, chunks=(2, 2, 4, 5))
    gyd = da.from_array(gy, chunks=(1, 3, 7, 11))
    res = cconv.convolution_backward(gyd, xd, w, [3], (2, 3), 1, 1, True, (1, 2), 1, (True, True, True))
    got = client.compute(list(res), sync=True)
    ref = cconv.convolution_backward(gy, x, w, [3], (2, 3), 1, 1, True, (1, 2), 1, (True, True, True))
    for g, r in zip(got, ref):
        assert_close(g, r, np.complex64, 4 * 9 * 10)
    xp = randn(rng, (3, 2, 16, 16), np.float32)
    wp = randn(rng, (5, 2, 3, 3), np.float32)
    gyp = randn(rng, (3, 5, 8, 8), np.float32)
    gi = cconv.grad.conv2d_input(xp.shape, wp, da.from_array(gyp, chunks=(1, 5, 4, 4)), stride=2, padding=1)
    g = client.compute(gi, sync=True)
    assert_close(g, cconv.grad.conv2d_input(xp.shape, wp, gyp, stride=2, padding=1), np.float32, 45)
