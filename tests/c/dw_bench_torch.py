"""Times the depthwise kernels against torch.nn.functional.conv2d/conv1d.

Calls alternate (torch, cconv kernel, cconv public API) so that a busy
machine slows all of them alike; prints the best and median of each, the
ratio of the best times and the bandwidth of the compulsory traffic
(input + output + weights) at the best time.

    python tests/c/dw_bench_torch.py [--threads 2] [--reps 200] [--dtype float32]
Run from outside the repository root (or with an editable install).
"""
import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F

import cconv
from cconv import _depthwise

CASES = [
    # name, (N, C, *spatial), k, stride, padding
    ("mnv2 1x32x112x112 s1", (1, 32, 112, 112), 3, 1, 1),
    ("mnv2 1x96x112x112 s2", (1, 96, 112, 112), 3, 2, 1),
    ("mnv2 8x144x56x56 s1", (8, 144, 56, 56), 3, 1, 1),
    ("mnv2 1x576x14x14 s1", (1, 576, 14, 14), 3, 1, 1),
    ("conformer 1x256x100 k31", (1, 256, 100), 31, 1, 15),
    ("conformer 1x256x500 k31", (1, 256, 500), 31, 1, 15),
    ("conformer 8x256x500 k31", (8, 256, 500), 31, 1, 15),
    ("5x5 1x240x28x28 s1", (1, 240, 28, 28), 5, 1, 2),
    ("5x5 1x144x56x56 s2", (1, 144, 56, 56), 5, 2, 2),
]


def geom(shape, k, s, p):
    N, C = shape[:2]
    sp = shape[2:]
    out = tuple((v + 2 * p - k) // s + 1 for v in sp)
    lead = 3 - len(sp)
    g = (N, C, C, C, (1,) * lead + tuple(sp), (1,) * lead + out, (1,) * lead + (k,) * len(sp),
         (1,) * lead + (s,) * len(sp), (0,) * lead + (p,) * len(sp), (1, 1, 1))
    return g, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--isa", default=None)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cconv.set_num_threads(a.threads)
    if a.isa:
        _depthwise.set_isa(a.isa)
    dt = np.dtype(a.dtype)
    print(f"torch {torch.__version__}, {a.threads} threads, {dt.name}, isa {_depthwise.isa()}")
    print(f"{'case':26s} {'torch ms':>17s} {'kernel ms':>17s} {'api ms':>8s} {'ratio':>6s} {'GB/s':>6s}")
    for name, shape, k, s, p in CASES:
        rng = np.random.default_rng(0)
        x = rng.standard_normal(shape).astype(dt)
        C = shape[1]
        nsp = len(shape) - 2
        w = rng.standard_normal((C, 1) + (k,) * nsp).astype(dt)
        b = rng.standard_normal(C).astype(dt)
        g, out = geom(shape, k, s, p)
        y = np.empty(shape[:2] + out, dt)
        xt, wt, bt = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        conv = F.conv2d if nsp == 2 else F.conv1d
        fn = cconv.conv2d if nsp == 2 else cconv.conv1d
        xf, wf, bf, yf = x.reshape(-1), w.reshape(-1), b, y.reshape(-1)
        with torch.no_grad():
            ref = conv(xt, wt, bt, stride=s, padding=p, groups=C).numpy()
            _depthwise.fwd(g, xf, wf, bf, yf, a.threads)
            err = np.max(np.abs(y - ref)) / np.max(np.abs(ref))
            tt, tk, ta = [], [], []
            for i in range(a.reps + 5):
                t0 = time.perf_counter()
                conv(xt, wt, bt, stride=s, padding=p, groups=C)
                t1 = time.perf_counter()
                _depthwise.fwd(g, xf, wf, bf, yf, a.threads)
                t2 = time.perf_counter()
                fn(x, w, b, stride=s, padding=p, groups=C, out=y, backend="depthwise")
                t3 = time.perf_counter()
                if i >= 5:
                    tt.append(t1 - t0), tk.append(t2 - t1), ta.append(t3 - t2)
        tt, tk, ta = (np.array(v) * 1e3 for v in (tt, tk, ta))
        nbytes = (x.nbytes + y.nbytes + w.nbytes)
        print(f"{name:26s} {tt.min():7.3f} ({np.median(tt):7.3f}) {tk.min():7.3f} ({np.median(tk):7.3f})"
              f" {ta.min():8.3f} {tk.min() / tt.min():6.3f} {nbytes / tk.min() * 1e-6:6.1f}"
              f"   err {err:.1e}")


if __name__ == "__main__":
    main()
