"""Every method that can run each benchmark layer, timed, against the
default choice and benchmark mode's pick.

    python benches/method_table.py [--threads 2] [--ops forward,grad_input,grad_weight]
                                   [--extra] [--cases a,b] [--dtype float32] [--repeat 7]
                                   [--markdown] [--out FILE]

For every case (benches/benchmarks/_cases.py; --extra adds the second set)
and operation: the method ``cconv.select_backend`` names (the default), the
median time of every method the dispatcher lists as able to compute it
(each forced with ``backend=``, timed in blocks of calls, the blocks
interleaved across methods), the fastest, how much faster than the default
it is, and what benchmark mode (``cconv.benchmark()``) picked on a fresh
first call.  Times are medians over the blocks; the machine's load is
printed with the CPU and ISA, so a run can be judged.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks._cases import CASES, EXTRA  # noqa: E402

import cconv  # noqa: E402
from cconv import _autotune, _dispatch  # noqa: E402
from cconv._args import compute_dtype  # noqa: E402
from cconv._dispatch import Problem  # noqa: E402
from cconv._params import make_params  # noqa: E402

OPS = ("forward", "grad_input", "grad_weight")


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def call(c, op, x, w, b, gy, backend):
    s, p, d, tr, opad, g = c.conv_args()
    if op == "forward":
        return cconv.convolution(x, w, b, s, p, d, tr, opad, g, backend=backend)
    mask = (op == "grad_input", op == "grad_weight", False)
    return cconv.convolution_backward(gy, x, w, None, s, p, d, tr, opad, g, mask, backend=backend)


def candidates(c, op, x, w, b):
    s, p, d, tr, opad, g = c.conv_args()
    dt = np.dtype(x.dtype)
    prm = make_params(x.shape, w.shape, None if b is None else b.shape, s, p, d, tr, opad, g,
                      "method_table", compute_dtype(dt), dt)
    return _dispatch.candidates(Problem(prm, np, op, False, op != "forward"))


def timed(f, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


def measure(c, op, dtype, repeat, block_s=0.05):
    x, w, b, gy = c.arrays(dtype)
    s, p, d, tr, opad, g = c.conv_args()
    default = cconv.select_backend(x, w, b, s, p, d, tr, opad, g, op=op)
    cands = candidates(c, op, x, w, b)
    fns = {m: (lambda m=m: call(c, op, x, w, b, gy, m)) for m in cands}
    reps = {}
    for m, f in fns.items():  # warm up; calls per block ~ block_s
        f()
        t = timed(f, 1)
        reps[m] = max(1, min(50, int(block_s / max(t, 1e-6))))
    times = {m: [] for m in cands}
    for _ in range(repeat):  # interleaved blocks
        for m, f in fns.items():
            times[m].append(timed(f, reps[m]))
    med = {m: float(np.median(v)) * 1e3 for m, v in times.items()}
    _autotune.clear()
    with cconv.benchmark():
        call(c, op, x, w, b, gy, None)
        picked = cconv.select_backend(x, w, b, s, p, d, tr, opad, g, op=op)
    _autotune.clear()
    best = min(med, key=med.get)
    return default, med, best, picked


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ops", default="forward")
    ap.add_argument("--cases", default="")
    ap.add_argument("--extra", action="store_true")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    cconv.set_num_threads(args.threads)
    allc = dict(CASES)
    if args.extra:
        allc.update(EXTRA)
    names = args.cases.split(",") if args.cases else list(allc)
    ops = [o for o in args.ops.split(",") if o]
    for o in ops:
        if o not in OPS:
            ap.error(f"--ops: {o!r} is not one of {', '.join(OPS)}")
    out = open(args.out, "w") if args.out else sys.stdout
    isa = cconv._kernels.isa()
    head = (f"{cpu_name()} ({isa}), {args.threads} threads, {args.dtype}, median of {args.repeat} "
            f"interleaved blocks, load average {os.getloadavg()[0]:.2f} at start")
    sep = "|" if args.markdown else " "
    if args.markdown:
        print(f"{head}\n", file=out)
        print("| case | op | default | ms | fastest | ms | default / fastest | benchmark mode | "
              "every method (ms) |", file=out)
        print("|---|---|---|---|---|---|---|---|---|", file=out)
    else:
        print(head, file=out)
    for nm in names:
        c = allc[nm]
        for op in ops:
            default, med, best, picked = measure(c, op, args.dtype, args.repeat)
            every = ", ".join(f"{m.value} {t:.3g}" for m, t in sorted(med.items(), key=lambda kv: kv[1]))
            row = [nm, op, default.value, f"{med[default]:.3g}", best.value, f"{med[best]:.3g}",
                   f"{med[default] / med[best]:.2f}", picked.value, every]
            if args.markdown:
                print("| " + " | ".join(row) + " |", file=out, flush=True)
            else:
                print(sep.join(row), file=out, flush=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}", file=out)


if __name__ == "__main__":
    main()
