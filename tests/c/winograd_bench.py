"""Times WINOGRAD_DEPTHWISE_3X3 against DEPTHWISE (and torch) through the
public API on the MobileNetV2 depthwise 3x3 stride-1 layers (padding 1, bias),
interleaved, many repetitions: the data behind the dispatch rule.

    python tests/c/winograd_bench.py [--threads 1 2] [--reps 40] [--shapes NxCxHxW ...]

One thread: CPU time of the calling thread (time.thread_time: robust on a
shared machine; the kernels run on the calling thread).  More threads: wall
time (time.perf_counter) and, separately, process CPU time.  Prints median and
minimum microseconds per call and the ratios.  Run it from outside the
repository root (or with the editable install), e.g. ``cd /tmp``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import cconv

SHAPES = ["1x32x112x112", "1x144x56x56", "8x144x56x56", "1x384x28x28", "1x960x7x7"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--shapes", nargs="+", default=SHAPES)
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:  # pragma: no cover
        torch = None
    if a.no_torch:
        torch = None
    from cconv import _depthwise, _winograd

    print(f"isa: depthwise {_depthwise.isa()}, winograd {_winograd.isa()}")
    for nt in a.threads:
        cconv.set_num_threads(nt)
        if torch is not None:
            torch.set_num_threads(nt)
        clocks = {"cpu": time.thread_time} if nt == 1 else {"wall": time.perf_counter,
                                                            "cpu": time.process_time}
        for s in a.shapes:
            shp = tuple(int(v) for v in s.split("x"))
            rng = np.random.default_rng(0)
            C = shp[1]
            x = rng.standard_normal(shp, dtype=np.float32)
            w = rng.standard_normal((C, 1, 3, 3), dtype=np.float32)
            b = rng.standard_normal(C, dtype=np.float32)
            out = np.empty_like(x)
            fs = {
                "direct": lambda: cconv.conv2d(x, w, b, padding=1, groups=C, backend="depthwise", out=out),
                "wino": lambda: cconv.conv2d(x, w, b, padding=1, groups=C,
                                             backend="winograd_depthwise_3x3", out=out),
            }
            if torch is not None:
                xt, wt, bt = map(torch.from_numpy, (x, w, b))
                fs["torch"] = lambda: torch.nn.functional.conv2d(xt, wt, bt, padding=1, groups=C)
            inner = max(1, int(1_000_000 // np.prod(shp)))
            for clk_name, clk in clocks.items():
                ts = {k: [] for k in fs}
                for f in fs.values():
                    f(), f()
                for _ in range(a.reps):
                    for k, f in fs.items():
                        t0 = clk()
                        for _ in range(inner):
                            f()
                        ts[k].append((clk() - t0) / inner * 1e6)
                med = {k: float(np.median(v)) for k, v in ts.items()}
                mn = {k: float(np.min(v)) for k, v in ts.items()}
                cols = "  ".join(f"{k} {med[k]:8.1f} (min {mn[k]:8.1f})" for k in fs)
                ratio = f"wino/direct {med['wino'] / med['direct']:.2f} (min {mn['wino'] / mn['direct']:.2f})"
                if "torch" in fs:
                    ratio += f"  wino/torch {med['wino'] / med['torch']:.2f}"
                print(f"{s:14s} nt={nt} {clk_name:4s} {cols}  {ratio}", flush=True)


if __name__ == "__main__":
    main()
