#!/usr/bin/env python3
"""Where a second thread pays: each kernel family on problems of growing
work, timed on 1 and 2 threads with every call split and threaded
(CCONV_GRAIN_SCALE=0, so the grains of src/core/parallel.h do not decide), idle
and with N other processes spinning on the CPUs.

    python benches/threads_grain.py                 # idle, then 2 and 4 busy processes
    python benches/threads_grain.py --busy 0,3 --repeat 60

Per problem: the work in the family's unit (multiply-adds; bytes for the
transpose; values for grad_bias), the median time on 1 and on 2 threads
(rounds alternate the two, so drift hits them alike) and their ratio
t2/t1: below 1 the second thread paid.  The grain of a family is the work
from which t2/t1 stays clearly below 1 idle, and below about 1 loaded.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import numpy as np
import cconv
from cconv import _kernels, _nhwc

repeat = int(sys.argv[1])
rng = np.random.default_rng(0)
f32 = np.float32


def arr(*s):
    return rng.standard_normal(s).astype(f32)


def fwd(x, w, **kw):
    return lambda: cconv.conv2d(x, w, **kw), None


def problems():
    out = []
    for hw in (1, 2, 4, 7, 14, 28, 56):  # 1x1 GEMM family
        x, w = arr(1, 128, hw, hw), arr(128, 128, 1, 1)
        out.append(("gemm_1x1", 128 * 128 * hw * hw, fwd(x, w)))
    for hw in (4, 7, 10, 14, 20, 28, 40):  # implicit GEMM / Winograd: 3x3 64 -> 64
        x, w = arr(1, 64, hw, hw), arr(64, 64, 3, 3)
        out.append(("igemm_3x3", 64 * 64 * 9 * hw * hw, fwd(x, w, padding=1)))
    for hw in (4, 8, 14, 28, 56):  # im2col: strided 3x3, deep reduction, small images
        x, w = arr(2, 256, hw, hw), arr(256, 256, 3, 3)
        oh = (hw + 2 - 3) // 2 + 1
        out.append(("im2col_s2", 2 * 256 * 256 * 9 * oh * oh, fwd(x, w, stride=2, padding=1)))
    for hw in (7, 14, 28, 56, 112):  # depthwise 3x3
        x, w = arr(1, 64, hw, hw), arr(64, 1, 3, 3)
        out.append(("depthwise", 64 * 9 * hw * hw, fwd(x, w, padding=1, groups=64)))
    for hw in (2, 4, 8, 16, 32):  # adjoint: transposed 4x4 s2
        x, w = arr(1, 64, hw, hw), arr(64, 64, 4, 4)
        out.append(("adjoint", 64 * 64 * 16 * hw * hw,
                    (lambda x=x, w=w: cconv.conv_transpose2d(x, w, stride=2, padding=1), None)))
    for hw in (4, 8, 16, 32, 64):  # weight gradient 3x3 64 -> 64
        x, gy = arr(1, 64, hw, hw), arr(1, 64, hw, hw)
        out.append(("wgrad", 64 * 64 * 9 * hw * hw,
                    (lambda x=x, gy=gy: cconv.grad.conv2d_weight(x, (64, 64, 3, 3), gy, padding=1), None)))
    for n in (2**12, 2**14, 2**16, 2**18, 2**20, 2**22):  # grad_bias: values summed
        gy = arr(1, 64, n // 64)
        gb = np.empty(64, f32)
        out.append(("bias_grad", n, (lambda gy=gy, gb=gb, n=n: _kernels.bias_grad(
            1, 64, n // 64, gy, gb, cconv.get_num_threads()), None)))
    for n in (2**14, 2**16, 2**18, 2**20, 2**22, 2**24):  # layout transpose: bytes
        src = np.ones(n // 4, f32)
        dst = np.empty_like(src)
        r = 64
        c = n // 4 // r
        out.append(("transpose", n, (lambda src=src, dst=dst, r=r, c=c: _nhwc.transpose(
            1, r, c, 4, src.view(np.uint8), dst.view(np.uint8), cconv.get_num_threads()), None)))
    return out


def median(ts):
    ts = sorted(ts)
    return ts[len(ts) // 2]


res = []
for fam, work, (f, _) in problems():
    times = {1: [], 2: []}
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        for _ in range(3):
            f()
    for i in range(repeat):
        for nt in ((1, 2) if i % 2 == 0 else (2, 1)):
            cconv.set_num_threads(nt)
            t0 = time.perf_counter()
            f()
            times[nt].append(time.perf_counter() - t0)
    res.append((fam, work, median(times[1]) * 1e3, median(times[2]) * 1e3))
print(json.dumps(res))
"""


def run(busy, repeat):
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        time.sleep(0.5 if busy else 0)
        env = dict(os.environ, CCONV_GRAIN_SCALE="0")
        r = subprocess.run([sys.executable, "-c", CHILD, str(repeat)], env=env, capture_output=True,
                           text=True, check=True)
        return json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--busy", default="0,2,4", help="numbers of busy processes, one run each")
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = [f"CPU: {cpu}, {os.cpu_count()} CPUs, {platform.machine()}; load before: "
             f"{os.getloadavg()[0]:.1f}; {args.repeat} rounds, medians; CCONV_GRAIN_SCALE=0", ""]
    runs = {int(b): run(int(b), args.repeat) for b in args.busy.split(",")}
    head = "| family | work | " + " | ".join(f"busy={b}: 1T ms | 2T ms | 2T/1T" for b in runs) + " |"
    lines += [head, "|" + "---|" * (2 + 3 * len(runs))]
    first = next(iter(runs.values()))
    for i, (fam, work, _, _) in enumerate(first):
        cells = []
        for b, rs in runs.items():
            _, _, t1, t2 = rs[i]
            cells.append(f"{t1:.4f} | {t2:.4f} | {t2 / t1:.2f}")
        lines.append(f"| {fam} | {work:.3g} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
