"""cconv on dask arrays, on a dask.distributed LocalCluster: throughput and
peak memory per worker, against cconv's single-process NumPy call.

Two cases:

* ``image``: one 2-D image of ``channels`` x ``size`` x ``size`` float32,
  generated chunk by chunk inside the graph (never held whole), convolved
  3x3 ('same', ``channels`` -> ``channels``, with bias), each result chunk
  reduced to per-channel sums (so nothing of the size of the image is
  kept either).  Regions straddling chunk corners are checked against the
  NumPy path on the same input, regenerated.
* ``resnet``: a batch of ResNet-50 layer inputs (default 256 x 64 x 56 x 56,
  the 3x3 64 -> 64 convolution of the first stage), chunked over the
  batch: the forward, and the weight and bias gradients (a fixed-order
  tree sum over the batch chunks).

The NumPy baseline is one cconv call on arrays that fit in memory, in this
process, on every core (and on one, for reference); the dask runs use
``workers`` worker processes of one thread and one cconv thread each.
Peak memory per worker is the worker process's peak resident set during
the computation (VmHWM, reset when it starts), on a cluster started for
that run alone.

Needs dask[array] and distributed (``pip install 'cconv[dask]' distributed``).
Examples (the figures in benches/results/dask-*.md)::

    python benches/dask_bench.py image --size 40000 --chunk 1000
    python benches/dask_bench.py image --size 40000 --chunk 25x40000
    python benches/dask_bench.py resnet --batch 256 --batch-chunk 32
    ... --out benches/results/dask-<date>-<cpu>.md   (appends a section)
"""
from __future__ import annotations

import argparse
import datetime
import logging
import math
import os
import platform
import resource
import statistics
import sys
import time

import numpy as np


# --------------------------------------------------------------------------
# helpers run on the workers
# --------------------------------------------------------------------------
def gen_block(seed, block_info=None):
    """A chunk of uniform [-0.5, 0.5) float32, a function of its position."""
    info = block_info[None]
    rng = np.random.default_rng([seed, *info["chunk-location"]])
    a = rng.random(info["chunk-shape"], dtype=np.float32)
    a -= np.float32(0.5)
    return a


def worker_setup(threads: int = 1):
    import cconv

    cconv.set_num_threads(threads)
    x = np.ones((1, 2, 8, 8), np.float32)
    cconv.conv2d(x, np.ones((2, 2, 3, 3), np.float32), padding=1)   # load the kernels
    return current_rss()


def reset_peak() -> int:
    """Reset this process's peak resident set (Linux: VmHWM, by writing 5 to
    /proc/self/clear_refs); the resident set now, in bytes."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return current_rss()


def peak_rss() -> int:
    """This process's peak resident set in bytes since the last reset_peak
    (VmHWM; getrusage's ru_maxrss, which cannot be reset, if it is absent)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# --------------------------------------------------------------------------
# the machine
# --------------------------------------------------------------------------
def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine_line() -> str:
    import cconv
    from cconv._dispatch import simd_level

    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    load = os.getloadavg()
    return (f"{cpu_name()}, SIMD {simd_level()}, {os.cpu_count()} cores, {mem / 2**30:.1f} GiB; "
            f"cconv {cconv.__version__}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def mib(n: float) -> str:
    return f"{n / 2**20:.0f} MiB"


# --------------------------------------------------------------------------
# cluster runs
# --------------------------------------------------------------------------
def start_cluster(workers: int):
    import dask
    import distributed

    dask.config.set({"distributed.worker.multiprocessing-method": "spawn",
                     "distributed.comm.timeouts.connect": "120s"})
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster, timeout="120s")
    client.wait_for_workers(workers, timeout=300)
    base = client.run(worker_setup, 1)
    return cluster, client, base


def run_on_cluster(workers: int, build, repeat: int = 1):
    """Start a cluster, compute what ``build(client)`` returns (``repeat``
    times), close it: (result, median seconds, {worker: peak RSS during the
    computations}, {worker: RSS when they start})."""
    cluster, client, base = start_cluster(workers)
    try:
        client.compute(warm_up(), sync=True)
        what = build(client)
        base = client.run(reset_peak)
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            res = client.compute(what, sync=True)
            ts.append(time.perf_counter() - t0)
        peaks = client.run(peak_rss)
    finally:
        client.close(timeout=60)
        cluster.close(timeout=60)
    return res, statistics.median(ts), peaks, base


def warm_up():
    """A tiny graph of the same kinds of tasks (generation, halo strips,
    forward, backward, tree sums), so that the timed run does not pay for
    the workers' first imports and deserialisations."""
    import dask.array as da

    import cconv

    x = da.map_blocks(gen_block, 0, chunks=((1, 1), (2,), (4, 4), (4, 4)), dtype=np.float32,
                      meta=np.empty((0, 0, 0, 0), np.float32))
    w = np.ones((2, 2, 3, 3), np.float32)
    y = cconv.conv2d(x, w, w[:, 0, 0, 0], padding=1)
    g = cconv.convolution_backward(y, x, w, [2], 1, 1, 1, False, 0, 1, (True, True, True))
    return [y.sum(axis=(0, 2, 3), dtype=np.float64)] + list(g)


def time_numpy(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


# --------------------------------------------------------------------------
# image
# --------------------------------------------------------------------------
def image_case(args, out):
    import dask.array as da

    import cconv

    C, S = args.channels, args.size
    if "x" in args.chunk:
        ch, cw = (int(v) for v in args.chunk.split("x"))
    else:
        ch = cw = int(args.chunk)
    rng = np.random.default_rng(1)
    w = (rng.random((C, C, 3, 3), dtype=np.float32) - 0.5).astype(np.float32)
    b = (rng.random(C, dtype=np.float32) - 0.5).astype(np.float32)
    seed = 12345

    def image(size, chunks):
        return da.map_blocks(gen_block, seed, chunks=((1,), (C,)) + chunks, dtype=np.float32,
                             meta=np.empty((0, 0, 0, 0), np.float32))

    def grid(n, c):
        return (c,) * (n // c) + ((n % c,) if n % c else ())

    def build(size):
        x = image(size, (grid(size, min(ch, size)), grid(size, min(cw, size))))
        y = cconv.conv2d(x, w, b, padding=1)
        return x, y, y.sum(axis=(0, 2, 3), dtype=np.float64)

    x_big, y_big, _ = build(S)
    in_bytes = x_big.nbytes
    chunk_bytes = C * ch * cw * 4
    flop = 2 * C * C * 9 * S * S
    print(f"image {C}x{S}x{S} float32: input {gib(in_bytes)} ({x_big.npartitions} chunks of "
          f"{mib(chunk_bytes)}), output as large; {len(y_big.__dask_graph__())} tasks", flush=True)

    # the same work, interleaved: one NumPy call on every core against the
    # cluster, on the same input (held in the workers), at a size that fits
    s_np = args.numpy_size
    px_np = s_np * s_np
    cluster, client, _ = start_cluster(args.workers)
    try:
        client.compute(warm_up(), sync=True)
        xs = client.persist(build(s_np)[0])
        distributed_wait(xs)
        xn = client.compute(xs, sync=True)
        red = cconv.conv2d(xs, w, b, padding=1).sum(axis=(0, 2, 3), dtype=np.float64)
        client.compute(red, sync=True)
        ts_np, ts_da = [], []
        for _ in range(args.repeat):
            cconv.set_num_threads(os.cpu_count())
            ts_np.append(time_numpy(lambda: cconv.conv2d(xn, w, b, padding=1), 1))
            t0 = time.perf_counter()
            client.compute(red, sync=True)
            ts_da.append(time.perf_counter() - t0)
        t_np, t_da = statistics.median(ts_np), statistics.median(ts_da)
        cconv.set_num_threads(1)
        t_np1 = time_numpy(lambda: cconv.conv2d(xn, w, b, padding=1), 1)
        cconv.set_num_threads(os.cpu_count())
        t_gen = time_numpy(lambda: gen_block(seed, {None: {"chunk-location": (0, 0, 0, 0),
                                                           "chunk-shape": xn.shape}}), 1)
    finally:
        xn = xs = None   # (the memory back before the next cluster)
        client.close(timeout=60)
        cluster.close(timeout=60)
    print(f"{s_np}^2: numpy {t_np:.3f} s ({px_np / t_np / 1e6:.1f} Mpixel/s), 1 thread {t_np1:.3f} s; "
          f"dask on the held input {t_da:.3f} s; generating it in one process {t_gen:.3f} s", flush=True)

    rows = []
    for size in [S]:
        _, y, red = build(size)
        res, dt, peaks, base = run_on_cluster(args.workers, lambda client: red)
        # the input generated and reduced without the convolution: the pipeline's own cost
        x0, _, _ = build(size)
        _, dt0, peaks0, _ = run_on_cluster(args.workers, lambda client: x0.sum(axis=(0, 2, 3), dtype=np.float64))
        px = size * size
        rows.append((size, dt, dt0, peaks, base, peaks0, px))
        print(f"dask {size}^2: {dt:.1f} s ({px / dt / 1e6:.1f} Mpixel/s, {flop / S / S * px / dt / 1e9:.1f} "
              f"GFLOP/s); generate+reduce only {dt0:.1f} s; peak RSS per worker "
              f"{', '.join(mib(v) for v in peaks.values())} (at the start "
              f"{', '.join(mib(v) for v in base.values())}; without the convolution "
              f"{', '.join(mib(v) for v in peaks0.values())})", flush=True)

    # correctness: regions around chunk corners, against the NumPy path on the regenerated input
    checks = []
    for (r, c) in [(ch, cw), (S // 2 // ch * ch, S // 2 // cw * cw), (S - ch, S - cw)]:
        r0, r1 = max(r - 24, 1), min(r + 24, S - 1)
        c0, c1 = max(c - 24, 1), min(c + 24, S - 1)
        xr = x_big[:, :, r0 - 1:r1 + 1, c0 - 1:c1 + 1].compute(scheduler="threads")
        want = cconv.conv2d(xr, w, b)
        got = y_big[:, :, r0:r1, c0:c1].compute(scheduler="threads")
        checks.append((r0, c0, float(np.abs(got - want).max()), bool(np.array_equal(got, want))))
    print("checks (row, col, max |diff|, bit-identical):", checks, flush=True)

    lines = [
        f"### image: 1 x {C} x {S} x {S} float32, conv 3x3 {C} -> {C}, 'same', bias",
        "",
        f"Input {gib(in_bytes)} (output as large), generated chunk by chunk in the graph, chunks "
        f"{C} x {ch} x {cw} ({mib(chunk_bytes)}), each result chunk reduced to per-channel sums; "
        f"{len(y_big.__dask_graph__())} tasks in the convolution's graph (generation, halo strips, "
        f"convolutions).  LocalCluster: {args.workers} worker processes x 1 thread, cconv 1 thread each.",
        "",
        "| run | pixels | time (s) | Mpixel/s | conv GFLOP/s | throughput vs NumPy (same work) | "
        "peak RSS per worker |",
        "|---|---|---|---|---|---|---|",
        f"| NumPy: conv, 1 call, {os.cpu_count()} threads | {s_np}^2 | {t_np:.3f} | {px_np / t_np / 1e6:.1f} | "
        f"{2 * C * C * 9 * px_np / t_np / 1e9:.1f} | 1 | (input + output {gib(2 * C * px_np * 4)}) |",
        f"| NumPy: conv, 1 call, 1 thread | {s_np}^2 | {t_np1:.3f} | {px_np / t_np1 / 1e6:.1f} | "
        f"{2 * C * C * 9 * px_np / t_np1 / 1e9:.1f} | {t_np / t_np1:.2f} | |",
        f"| dask: conv + reduce, input held in the workers (interleaved with the NumPy calls) | {s_np}^2 | "
        f"{t_da:.3f} | {px_np / t_da / 1e6:.1f} | {2 * C * C * 9 * px_np / t_da / 1e9:.1f} | "
        f"{t_np / t_da:.2f} | |",
        f"| NumPy: generate (1 thread) + conv | {s_np}^2 | {t_gen + t_np:.3f} | "
        f"{px_np / (t_gen + t_np) / 1e6:.1f} | | 1 | |",
    ]
    for size, dt, dt0, peaks, base, peaks0, px in rows:
        thr = px / dt
        lines.append(
            f"| dask: generate + conv + reduce | {size}^2 | {dt:.1f} | {thr / 1e6:.1f} | | "
            f"{thr / (px_np / (t_gen + t_np)):.2f} | {' / '.join(mib(v) for v in peaks.values())} |")
        lines.append(
            f"| dask: generate + reduce | {size}^2 | {dt0:.1f} | {px / dt0 / 1e6:.1f} | | | "
            f"{' / '.join(mib(v) for v in peaks0.values())} |")
        if dt > dt0:
            tc = dt - dt0
            lines.append(
                f"| dask: conv (the difference) | {size}^2 | {tc:.1f} | {px / tc / 1e6:.1f} | "
                f"{2 * C * C * 9 * px / tc / 1e9:.1f} | {(px / tc) / (px_np / t_np):.2f} | |")
    lines += [
        "",
        f"Worker RSS when the computation starts (after start-up and loading cconv): "
        f"{' / '.join(mib(v) for v in rows[-1][4].values())}.  "
        f"Generating the NumPy-size input in one process: {t_gen:.2f} s.  "
        f"Checks against the NumPy path on regenerated regions around chunk corners "
        f"(row, col, max |diff|, bit-identical): {checks}.",
        "",
    ]
    out.extend(lines)


# --------------------------------------------------------------------------
# resnet
# --------------------------------------------------------------------------
def resnet_case(args, out):
    import dask.array as da

    import cconv

    N, C, H, bc = args.batch, args.rchannels, args.hw, args.batch_chunk
    rng = np.random.default_rng(2)
    w = ((rng.random((C, C, 3, 3), dtype=np.float32) - 0.5) / 24).astype(np.float32)
    b = (rng.random(C, dtype=np.float32) - 0.5).astype(np.float32)
    chunks = ((bc,) * (N // bc) + ((N % bc,) if N % bc else ()), (C,), (H,), (H,))

    def arr(seed):
        return da.map_blocks(gen_block, seed, chunks=chunks, dtype=np.float32,
                             meta=np.empty((0, 0, 0, 0), np.float32))

    x, gy = arr(3), arr(4)
    xn = x.compute(scheduler="sync")
    gyn = gy.compute(scheduler="sync")
    nb = xn.nbytes
    print(f"resnet: {N} x {C} x {H} x {H} float32 ({mib(nb)}), batch chunks of {bc} "
          f"({mib(nb * bc / N)})", flush=True)
    res = []
    for what in ("forward", "backward"):
        if what == "forward":
            def fnp():
                return cconv.conv2d(xn, w, b, padding=1)

            def build(client):
                xs = client.persist(arr(3))
                distributed_wait(xs)
                return cconv.conv2d(xs, w, b, padding=1).sum(axis=(0, 2, 3), dtype=np.float64)
        else:
            def fnp():
                return cconv.convolution_backward(gyn, xn, w, [C], 1, 1, 1, False, 0, 1, (False, True, True))

            def build(client):
                xs, gs = client.persist([arr(3), arr(4)])
                distributed_wait([xs, gs])
                return list(cconv.convolution_backward(gs, xs, w, [C], 1, 1, 1, False, 0, 1,
                                                       (False, True, True))[1:])
        cconv.set_num_threads(os.cpu_count())
        fnp()
        t_np = time_numpy(fnp, args.repeat)
        cconv.set_num_threads(1)
        t_np1 = time_numpy(fnp, max(1, args.repeat // 2))
        cconv.set_num_threads(os.cpu_count())
        r_np = fnp()
        got, dt, peaks, base = run_on_cluster(args.workers, build, args.repeat)
        if what == "forward":
            err = float(np.abs(got - r_np.sum(axis=(0, 2, 3), dtype=np.float64)).max()
                        / np.abs(got).max())
        else:
            err = max(float(np.abs(g - r).max() / np.abs(r).max()) for g, r in zip(got, r_np[1:]))
        res.append((what, t_np, t_np1, dt, peaks, base, err))
        print(f"{what}: numpy {t_np:.3f} s ({N / t_np:.0f} img/s), 1 thread {t_np1:.3f} s; dask {dt:.2f} s "
              f"({N / dt:.0f} img/s), peak RSS/worker {', '.join(mib(v) for v in peaks.values())} (at the start "
              f"{', '.join(mib(v) for v in base.values())}); rel. error vs NumPy {err:.1e}", flush=True)
    lines = [
        f"### ResNet-50 layer batch: {N} x {C} x {H} x {H} float32, conv 3x3 {C} -> {C}, pad 1, bias",
        "",
        f"Input {mib(nb)}; dask chunks of {bc} images ({mib(nb * bc / N)}), generated and held (persisted) "
        f"in the workers before the timing; the forward reduced to per-channel sums in the graph, the "
        f"backward = grad_weight and grad_bias (tree sums over the {math.ceil(N / bc)} batch chunks).  "
        f"LocalCluster: {args.workers} worker processes x 1 thread, cconv 1 thread each; medians of "
        f"{args.repeat} runs.",
        "",
        "| pass | NumPy, all cores (s) | NumPy, 1 thread (s) | dask (s) | dask / NumPy time | "
        "peak RSS per worker (at the start) | rel. error vs NumPy |",
        "|---|---|---|---|---|---|---|",
    ]
    for what, t_np, t_np1, dt, peaks, base, err in res:
        lines.append(f"| {what} | {t_np:.3f} | {t_np1:.3f} | {dt:.2f} | {dt / t_np:.2f} | "
                     f"{' / '.join(mib(v) for v in peaks.values())} "
                     f"({' / '.join(mib(v) for v in base.values())}) | {err:.1e} |")
    lines.append("")
    out.extend(lines)


def distributed_wait(x):
    import distributed

    distributed.wait(x)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=["image", "resnet"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", help="append a markdown section to this file")
    ap.add_argument("--size", type=int, default=40000)
    ap.add_argument("--channels", type=int, default=8)
    ap.add_argument("--chunk", default="1000", help="spatial chunk: N (square) or HxW")
    ap.add_argument("--numpy-size", type=int, default=8000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rchannels", type=int, default=64)
    ap.add_argument("--hw", type=int, default=56)
    ap.add_argument("--batch-chunk", type=int, default=32)
    args = ap.parse_args(argv)
    out: list[str] = []
    head = f"## {datetime.datetime.now():%Y-%m-%d %H:%M}: {' '.join(sys.argv[1:])}"
    out += [head, "", machine_line(), ""]
    print(machine_line(), flush=True)
    (image_case if args.case == "image" else resnet_case)(args, out)
    out += [f"Load average at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}.", ""]
    text = "\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
