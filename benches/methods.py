"""Which method runs each benchmark layer's forward, and its speed.

    python benches/methods.py [--threads T] [--cases a,b] [--dtype float32]

For every case of benchmarks/_cases.py: the method the dispatcher chooses
(``cconv.select_backend``), the median time of cconv and (when installed)
torch over the same interleaved rounds, their ratio and cconv's GFLOP/s.
With --threads 1 the clock is the process CPU time, which a busy machine
disturbs least.  The measurements behind the default rules are in
benches/results.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks._cases import CASES  # noqa: E402

import cconv  # noqa: E402


def method(c, x, w, b):
    return cconv.select_backend(x, w, b, c.stride, c.padding, c.dilation, c.transposed,
                                c.output_padding, c.groups).name


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cases", default="")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    nt = args.threads
    cconv.set_num_threads(nt)
    try:
        import torch
        torch.set_num_threads(nt)
    except ImportError:
        torch = None
    clock = time.process_time if nt == 1 else time.perf_counter
    names = args.cases.split(",") if args.cases else list(CASES)

    def med(f, n=7):
        f()
        ts = []
        for _ in range(n):
            t0 = clock()
            f()
            ts.append(clock() - t0)
        return float(np.median(ts)) * 1e3

    print(f"threads {nt}, dtype {args.dtype}, clock {'process CPU' if nt == 1 else 'wall'}")
    print(f"{'case':22s} {'method':24s} {'cconv ms':>9s} {'torch ms':>9s} {'ratio':>6s} {'GFLOP/s':>8s}")
    for nm in names:
        c = CASES[nm]
        x, w, b, _ = c.arrays(args.dtype)
        kw = c.kwargs()
        f = getattr(cconv, c.func_name)
        be = method(c, x, w, b)
        tc, tt = [], []
        for _ in range(args.rounds):
            tc.append(med(lambda: f(x, w, b, **kw)))
            if torch is not None:
                xt, wt, bt = map(torch.from_numpy, (x, w, b))
                ft = getattr(torch.nn.functional, c.func_name)
                tt.append(med(lambda: ft(xt, wt, bt, **kw)))
        mc = float(np.median(tc))
        mt = float(np.median(tt)) if tt else float("nan")
        print(f"{nm:22s} {be:24s} {mc:9.2f} {mt:9.2f} {mc / mt:6.2f} {c.flops() / mc / 1e6:8.1f}",
              flush=True)


if __name__ == "__main__":
    main()
