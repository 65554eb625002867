#!/usr/bin/env python3
"""Time cconv against PyTorch's CPU convolution, ONNX Runtime and a NumPy baseline, in one run.

    python benches/compare.py                       # forward set, 1 and 2 threads
    python benches/compare.py --set all --markdown --out results.md
    python benches/compare.py --cases resnet50_stem,mbv2_dw_s1_b8 --threads 2
    python benches/compare.py --cuda                # cconv on CuPy vs torch on CUDA
    python benches/compare.py --cuda-only           # the CUDA comparison alone

Contenders (each call is timed on its own; cconv and torch are interleaved,
round-robin with a rotating start, after a warm-up, so that drift in machine
load hits them alike; the NumPy baseline is timed in a pass of its own after
them, because NumPy's bundled OpenBLAS keeps its worker threads spinning for
a while after each matmul, and a spinning thread on one of the cores made
the next cconv or torch call wait for its own worker: on 2 cores a 0.1 ms
depthwise call took 1.7-2.8 ms after a matmul).  cconv and torch each run
their own OpenMP runtime, and the same holds between them to a smaller
degree; `--timing blocks` times each in short runs of calls of its own
instead (see run_blocks), which is what a user's loop sees.  A block
slowed as a whole (on a shared 2-core machine, now and then a block of a
library's calls at 2 threads waited 1-7 ms per call) moved the median of
two blocks; of three (the default --repeat 15 with blocks of 5) one such
block leaves the median among the others' calls:

  cconv   the installed cconv (forward: conv{1,2,3}d / conv_transpose{1,2,3}d;
          backward set: the forward plus cconv.convolution_backward for
          grad_input, grad_weight and grad_bias)
  torch   torch.nn.functional.conv* under torch.no_grad() (backward set:
          autograd forward + backward()), when torch is installed
  ort     ONNX Runtime (forward only, when onnxruntime and onnx are
          installed): a one-node Conv / ConvTranspose model built in memory,
          intra-op threads = T (cconv/_peers.py), timed with cconv and torch;
          its idle threads spin in --timing blocks (as in a user's loop) and
          sleep when interleaved
  numpy   im2col through sliding_window_view + matmul (NumPy's own BLAS),
          col2im for the transposed and backward cases

Threads: cconv.set_num_threads(T) and torch.set_num_threads(T); NumPy's BLAS is
limited with threadpoolctl when it is installed.  OMP_NUM_THREADS is read once
at start-up by the OpenMP runtimes and is never changed here.

Reported per case and thread count: median (and min) ms per call, GFLOP/s
(2 x multiply-adds of the forward; x3 for the backward set: forward,
grad_input and grad_weight), the fraction of a GEMM ceiling measured in the
same run, the memory traffic (GB/s: the bytes of every array the call
reads or writes, each counted once, over the median time) and its fraction
of a copy bandwidth measured in the same run (see copy_ceiling; layers whose
arrays stay in the caches between calls can exceed it: the run also
measures copies within the L2 and the L3, cache_copy_ceiling, which
benches/targets.py uses for layers that fit them), the time ratios
cconv/torch, cconv/ort and cconv/numpy (below 1: cconv is faster), minor page faults
per call of cconv and torch (getrusage ru_minflt around each call; the
first touch of a fresh page costs ~1 us), the backend
cconv chose, and the relative error of cconv against torch (else NumPy); an error
above 1e-4 (float32) or 1e-10 (float64) is marked FAIL and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import resource
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks._cases import CASES, EXTRA, SMALL  # noqa: E402

import cconv  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:          # torch is only a baseline, never required
    torch = None
    F = None

MASK = (True, True, True)
# relative error of cconv against torch (else the NumPy baseline) above which a
# case is reported as FAIL and the exit status is 1
TOL = {"float32": 1e-4, "float64": 1e-10}


# --------------------------------------------------------------------------
# NumPy baseline: im2col (sliding_window_view + one copy) + batched matmul
# --------------------------------------------------------------------------

def _np_cols(x, k, s, p, d, g):
    """im2col: a (g, N*P, C/g*K) array and the output size."""
    nsp = len(k)
    n, c = x.shape[:2]
    if any(p):
        x = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    ext = tuple(d[i] * (k[i] - 1) + 1 for i in range(nsp))
    v = sliding_window_view(x, ext, axis=tuple(range(2, 2 + nsp)))
    v = v[(slice(None),) * 2 + tuple(slice(None, None, si) for si in s)
          + tuple(slice(None, None, di) for di in d)]                    # (N, C, *out, *k)
    out = v.shape[2:2 + nsp]
    v = v.reshape((n, g, c // g) + v.shape[2:])
    perm = (1, 0) + tuple(range(3, 3 + nsp)) + (2,) + tuple(range(3 + nsp, 3 + 2 * nsp))
    return v.transpose(perm).reshape(g, n * math.prod(out), (c // g) * math.prod(k)), out


def _np_gy_mat(gy, g):
    n, co = gy.shape[:2]
    pn = math.prod(gy.shape[2:])
    return gy.reshape(n, g, co // g, pn).transpose(1, 0, 3, 2).reshape(g, n * pn, co // g)


def np_conv(x, w, b, k, s, p, d, g):
    """Plain convolution (PyTorch's conv: a cross-correlation)."""
    cols, out = _np_cols(x, k, s, p, d, g)
    n, nsp, og = x.shape[0], len(k), w.shape[0] // g
    y = np.matmul(cols, w.reshape(g, og, -1).transpose(0, 2, 1))         # (g, N*P, og)
    y = y.reshape((g, n) + out + (og,))
    y = y.transpose((1, 0, 2 + nsp) + tuple(range(2, 2 + nsp))).reshape((n, g * og) + out)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * nsp)
    return y


def np_conv_grad_input(gy, w, in_size, k, s, p, d, g):
    """Adjoint of np_conv in its input: GEMM, then col2im tap by tap."""
    n, nsp = gy.shape[0], len(k)
    out = gy.shape[2:]
    og, cg = w.shape[0] // g, w.shape[1]
    dcols = np.matmul(_np_gy_mat(gy, g), w.reshape(g, og, -1))          # (g, N*P, cg*K)
    dcols = dcols.reshape((g, n) + tuple(out) + (cg,) + tuple(k))
    gx = np.zeros((n, g, cg) + tuple(in_size[i] + 2 * p[i] for i in range(nsp)), gy.dtype)
    perm = (1, 0, 2 + nsp) + tuple(range(2, 2 + nsp))
    for tap in np.ndindex(*k):
        sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (out[i] - 1) + 1, s[i]) for i in range(nsp))
        gx[(slice(None),) * 3 + sl] += dcols[(Ellipsis,) + tap].transpose(perm)
    gx = gx[(slice(None),) * 3 + tuple(slice(p[i], p[i] + in_size[i]) for i in range(nsp))]
    return np.ascontiguousarray(gx).reshape((n, g * cg) + tuple(in_size))


def np_conv_grad_weight(x, gy, k, s, p, d, g):
    cols, out = _np_cols(x, k, s, p, d, g)
    gw = np.matmul(_np_gy_mat(gy, g).transpose(0, 2, 1), cols)           # (g, og, cg*K)
    return gw.reshape((gy.shape[1], x.shape[1] // g) + tuple(k))


def np_forward(c, x, w, b):
    s, p, d, tr, op, g = c.conv_args()
    k = tuple(c.kernel)
    if not tr:
        return np_conv(x, w, b, k, s, p, d, g)
    y = np_conv_grad_input(x, w, c.out_size(), k, s, p, d, g)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * c.nsp)
    return y


def np_backward(c, x, w, gy):
    s, p, d, tr, op, g = c.conv_args()
    k = tuple(c.kernel)
    gb = gy.sum(axis=(0,) + tuple(range(2, gy.ndim)))
    if not tr:
        return (np_conv_grad_input(gy, w, c.size, k, s, p, d, g),
                np_conv_grad_weight(x, gy, k, s, p, d, g), gb)
    return np_conv(gy, w, None, k, s, p, d, g), np_conv_grad_weight(gy, x, k, s, p, d, g), gb


# --------------------------------------------------------------------------
# threads
# --------------------------------------------------------------------------

def _numpy_blas_controllers():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    ctl = ThreadpoolController()
    return [lc for lc in ctl.lib_controllers
            if lc.user_api == "blas" and "numpy" in (lc.filepath or "")]


def set_threads(t, np_ctls):
    cconv.set_num_threads(t)
    if torch is not None:
        torch.set_num_threads(t)
    for lc in np_ctls or ():
        lc.set_num_threads(t)


# --------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------

def _minflt():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _warm(contenders, warmup, sync):
    for _ in range(warmup):
        for fn in contenders.values():
            fn()
    if sync:
        sync()


def _timed(fn, sync, times, faults, nm):
    """One timed call of fn: its seconds to times[nm], its minor faults to faults[nm]."""
    f0 = _minflt()
    t0 = time.perf_counter()
    fn()
    if sync:
        sync()
    t1 = time.perf_counter()
    faults[nm] += _minflt() - f0
    times[nm].append(t1 - t0)


def run_interleaved(contenders, repeat, warmup, sync=None):
    """contenders: {name: fn}.  Returns {name: (times, faults_per_call)}."""
    names = list(contenders)
    _warm(contenders, warmup, sync)
    times = {nm: [] for nm in names}
    faults = dict.fromkeys(names, 0)
    for r in range(repeat):
        for nm in names[r % len(names):] + names[:r % len(names)]:
            _timed(contenders[nm], sync, times, faults, nm)
    return {nm: (times[nm], faults[nm] / repeat) for nm in names}


def run_blocks(contenders, repeat, warmup, block, sync=None):
    """Like run_interleaved, but each contender runs `block` timed calls in a
    row, after one untimed call, and the contenders take turns (a, b, a,
    b, ...: each block follows one of the other) until each has `repeat`
    timed calls.  Every timed call then follows a call of the same library,
    as in a user's loop, not a call of the other one: two OpenMP runtimes
    (cconv's libgomp, torch's bundled one) each keep their workers spinning
    for a while after a parallel region, and on 2 cores the other library's
    spinning worker delays the next call's own worker (AMD EPYC, AVX2,
    2 threads: cconv's 0.1 ms depthwise call took 0.22 ms interleaved
    against 0.16 ms in blocks, torch's 0.57 against 0.46 ms; the effect
    fades with the call's length)."""
    names = list(contenders)
    _warm(contenders, warmup, sync)
    times = {nm: [] for nm in names}
    faults = dict.fromkeys(names, 0)
    while min(len(v) for v in times.values()) < repeat:
        for nm in names:
            fn = contenders[nm]
            fn()
            if sync:
                sync()
            for _ in range(min(block, repeat - len(times[nm]))):
                _timed(fn, sync, times, faults, nm)
    return {nm: (times[nm], faults[nm] / repeat) for nm in names}


def run_timed(args, contenders, sync=None):
    """Time `contenders` the way --timing says."""
    if args.timing == "blocks":
        return run_blocks(contenders, args.repeat, args.warmup, args.block, sync)
    return run_interleaved(contenders, args.repeat, args.warmup, sync)


def gemm_ceiling(dtype, repeat, n=1536):
    """GFLOP/s of one big square GEMM at the current thread count, from the best
    of a few calls: torch.mm when torch is installed (a GEMM as good as any),
    and cconv's own 1x1 convolution (its GEMM path) on the same problem."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(dtype)
    bm = rng.standard_normal((n, n)).astype(dtype)
    flops = 2.0 * n ** 3
    res = {}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(bm)
        r = run_interleaved({"mm": lambda: torch.mm(ta, tb)}, max(3, repeat // 2), 1)
        res[f"torch.mm {n}^3"] = flops / min(r["mm"][0]) / 1e9
    x = np.ascontiguousarray(bm.reshape(1, n, 48, n // 48))
    w = a.reshape(n, n, 1, 1)
    try:
        r = run_interleaved({"c": lambda: cconv.conv2d(x, w)}, max(3, repeat // 2), 1)
        res[f"cconv 1x1 conv {n}^3"] = flops / min(r["c"][0]) / 1e9
    except Exception as e:   # noqa: BLE001  a broken cconv is reported, not fatal here
        print(f"  (cconv 1x1 ceiling failed: {type(e).__name__}: {e})")
    return res


def _copy_gbs(nbytes, repeat, inner=1):
    """GB/s (bytes read plus written, best timed call) of copying a float32
    array of `nbytes` `inner` times a call: {"numpy copy, 1 core": ...,
    "torch copy_": ...} (the latter threaded, when torch is installed)."""
    src = np.ones(max(1, nbytes // 4), np.float32)
    dst = np.empty_like(src)
    moved = inner * 2 * src.nbytes
    calls = {"numpy copy, 1 core": lambda: np.copyto(dst, src)}
    if torch is not None:
        ts, td = torch.from_numpy(src), torch.from_numpy(dst)
        calls["torch copy_"] = lambda: td.copy_(ts)
    res = {}
    for name, copy in calls.items():
        def many(copy=copy):
            for _ in range(inner):
                copy()
        r = run_interleaved({"c": many}, max(3, repeat // 2), 1)
        res[name] = moved / min(r["c"][0]) / 1e9
    return res


def copy_ceiling(repeat, mib=64):
    """GB/s of a large array copy at the current thread count (bytes read plus
    bytes written, best call): NumPy's copy on one core, and torch's copy_
    (threaded) when torch is installed.  The arrays are 4x the L3 of most
    machines this runs on, so this is a DRAM figure: the bandwidth a
    memory-bound layer whose arrays do not stay in cache could reach."""
    return _copy_gbs(mib << 20, repeat)


def cache_sizes():
    """{"L2": bytes, "L3": bytes} of the first CPU's data/unified caches, from
    sysfs (Linux); the levels it does not list are left out."""
    out = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for e in entries:
        if not e.startswith("index"):
            continue
        try:
            with open(f"{base}/{e}/level") as f:
                level = int(f.read())
            with open(f"{base}/{e}/type") as f:
                kind = f.read().strip()
            with open(f"{base}/{e}/size") as f:
                txt = f.read().strip()
        except (OSError, ValueError):
            continue
        if level < 2 or kind == "Instruction":
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(txt[-1:].upper(), 1)
        try:
            out[f"L{level}"] = int(txt.rstrip("KkMmGg")) * mult
        except ValueError:
            continue
    return out


def cache_copy_ceiling(repeat, sizes=None):
    """GB/s of copies that stay in a cache level (bytes read plus written,
    best call): per level, source and destination together take half of
    that level's size (a core's L2; the L3), copied enough times per timed
    call to move ~64 MiB, with NumPy (one core) and with torch's copy_
    (threaded) when installed.  The roof a layer whose arrays stay in that
    level between calls meets (copy_ceiling is the DRAM one).  Returns
    {level: (the level's size in bytes, GB/s)}."""
    sizes = cache_sizes() if sizes is None else sizes
    res = {}
    for level in ("L2", "L3"):
        if level in sizes:
            nbytes = max(4096, sizes[level] // 4)           # each array 1/4 of the level
            inner = max(1, (64 << 20) // (2 * nbytes))       # ~64 MiB moved per timed call
            res[level] = (sizes[level], max(_copy_gbs(nbytes, repeat, inner).values()))
    return res


def traffic_bytes(which, x, w, b, got):
    """Bytes of the arrays one timed call reads or writes, each once: forward
    x, w, b and the output; the backward set's call is a forward and a
    backward, so x and w twice, b, the output, grad_output (the output's
    size) and the three gradients."""
    outs = got if isinstance(got, tuple) else (got,)
    nb = sum(_np(o).nbytes for o in outs if o is not None)
    if which == "forward":
        return x.nbytes + w.nbytes + b.nbytes + nb
    return 2 * (x.nbytes + w.nbytes) + b.nbytes + nb + _np(outs[0]).nbytes


def rel_err(a, ref):
    a = np.asarray(a, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if a.shape != ref.shape:
        return float("inf")
    den = np.linalg.norm(ref)
    return float(np.linalg.norm(a - ref) / den) if den else float(np.linalg.norm(a))


def _np(t):
    return t.detach().numpy() if torch is not None and isinstance(t, torch.Tensor) else t


def max_err(got, ref):
    got = got if isinstance(got, tuple) else (got,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    return max(rel_err(_np(g), _np(r)) for g, r in zip(got, ref))


def backend_of(c, x, w, b, need_backward):
    s, p, d, tr, op, g = c.conv_args()
    try:
        be = cconv.select_backend(x, w, b, stride=s, padding=p, dilation=d, transposed=tr,
                                  output_padding=op, groups=g, need_backward=need_backward)
        return getattr(be, "name", str(be))
    except Exception as e:   # noqa: BLE001
        return f"? ({type(e).__name__})"


def make_contenders(c, which, dtype, use_numpy=True, threads=1, use_ort=True, ort_spinning=False):
    x, w, b, gy = c.arrays(dtype)
    kw = c.kwargs()
    cfn = getattr(cconv, c.func_name)
    cont = {}
    if which == "forward":
        cont["cconv"] = lambda: cfn(x, w, b, **kw)
        if torch is not None:
            tfn = getattr(F, c.func_name)
            tx, tw, tb = (torch.from_numpy(a) for a in (x, w, b))

            def t_fwd():
                with torch.no_grad():
                    return tfn(tx, tw, tb, **kw)
            cont["torch"] = t_fwd
        if use_ort:
            # ONNX Runtime: a one-node Conv / ConvTranspose model, intra-op
            # threads = T (cconv/_peers.py); skipped when not installed
            from cconv import _peers

            run, _why = _peers.make("onnxruntime", c, x, w, b, threads, spinning=ort_spinning)
            if run is not None:
                cont["ort"] = run
        if use_numpy:
            cont["numpy"] = lambda: np_forward(c, x, w, b)
    else:
        if not hasattr(cconv, "convolution_backward"):
            return None, (x, w, b), "cconv.convolution_backward does not exist"
        cargs = c.conv_args()

        def c_bwd():
            y = cfn(x, w, b, **kw)
            gi, gw, gb = cconv.convolution_backward(gy, x, w, [c.c_out], *cargs, MASK)
            return y, gi, gw, gb
        cont["cconv"] = c_bwd
        if torch is not None:
            tfn = getattr(F, c.func_name)
            tx, tw, tb = (torch.from_numpy(a.copy()).requires_grad_(True) for a in (x, w, b))
            tgy = torch.from_numpy(gy)

            def t_bwd():
                tx.grad = tw.grad = tb.grad = None
                y = tfn(tx, tw, tb, **kw)
                y.backward(tgy)
                return y, tx.grad, tw.grad, tb.grad
            cont["torch"] = t_bwd
        if use_numpy:
            def n_bwd():
                y = np_forward(c, x, w, b)
                return (y,) + np_backward(c, x, w, gy)
            cont["numpy"] = n_bwd
    return cont, (x, w, b), None


# --------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------

def gmean(v):
    v = [e for e in v if e and math.isfinite(e) and e > 0]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def machine_line(args):
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor() or "?"
    try:
        avail = len(os.sched_getaffinity(0))
    except AttributeError:
        avail = os.cpu_count()
    tv = torch.__version__ if torch is not None else "absent"
    try:
        from cconv import _kernels
        simd = f"{_kernels.isa()} kernels, OpenBLAS {_kernels.blas_corename()} kernel set"
    except Exception:  # a cconv build without them
        simd = "?"
    return (f"machine: {cpu}; {simd}; {os.cpu_count()} cores ({avail} usable); OMP_NUM_THREADS="
            f"{os.environ.get('OMP_NUM_THREADS', 'unset')}; OPENBLAS_CORETYPE="
            f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')}; python {platform.python_version()}; "
            f"numpy {np.__version__}; torch {tv}; cconv {getattr(cconv, '__version__', '?')}; "
            f"dtype {args.dtype}; repeat {args.repeat}; timing {args.timing}"
            + (f" (block {args.block})" if args.timing == "blocks" else "") + "; "
            f"date {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")


COLS = ["set", "case", "T", "backend", "cconv ms", "torch ms", "ort ms", "numpy ms", "cconv GFLOP/s",
        "% ceil", "GB/s", "% copy", "cconv/torch", "cconv/ort", "cconv/numpy", "faults/call",
        "torch faults", "err"]


def _ms(times):
    if not times:
        return "-"
    return f"{np.median(times) * 1e3:.2f} ({min(times) * 1e3:.2f})"


def format_table(rows, markdown):
    cells = [[str(r.get(k, "-")) for k in COLS] for r in rows]
    if markdown:
        out = ["| " + " | ".join(COLS) + " |", "|" + "|".join("---" for _ in COLS) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in cells]
        return "\n".join(out)
    wid = [max(len(k), *(len(r[i]) for r in cells)) if cells else len(k) for i, k in enumerate(COLS)]
    out = ["  ".join(k.ljust(wid[i]) for i, k in enumerate(COLS))]
    out.append("  ".join("-" * x for x in wid))
    out += ["  ".join(r[i].ljust(wid[i]) for i in range(len(COLS))) for r in cells]
    return "\n".join(out)


def run_cpu(args, cases, sets, failures):
    rows, summary, ceilings = [], [], {}
    tol = TOL[args.dtype]
    np_ctls = _numpy_blas_controllers()
    if np_ctls is None:
        print("note: threadpoolctl is not installed; NumPy's BLAS threads are not limited")
    for t in args.threads:
        set_threads(t, np_ctls)
        # the ceiling is measured before and after this thread count's cases
        # (the best of both counts), so that a burst of load does not lower it
        ceil = gemm_ceiling(args.dtype, args.repeat)
        print(f"[T={t}] GEMM ceiling (first): "
              + ", ".join(f"{k} = {v:.1f} GFLOP/s" for k, v in ceil.items()), flush=True)
        copy = copy_ceiling(args.repeat)
        cache = cache_copy_ceiling(args.repeat)
        # the ceilings' threads (torch's, OpenBLAS's) spin a while after
        # their last call: let them go to sleep before the first case
        time.sleep(1.0)
        t_rows = []
        for which in sets:
            r_torch, r_np, r_ort = [], [], []
            for c in cases:
                cont, (x, w, b), why = make_contenders(c, which, args.dtype, not args.no_numpy, t,
                                                       not args.no_ort, args.timing == "blocks")
                row = {"set": which, "case": c.name, "T": t,
                       "backend": backend_of(c, x, w, b, which == "backward")}
                if cont is None:
                    row["backend"] += f" (skipped: {why})"
                    rows.append(row)
                    print(f"  {which:8s} {c.name:22s} skipped: {why}", flush=True)
                    continue
                try:
                    got = cont["cconv"]()
                    ref_name = "torch" if "torch" in cont else ("numpy" if "numpy" in cont else None)
                    err = max_err(got, cont[ref_name]()) if ref_name else float("nan")
                    pair = {k: v for k, v in cont.items() if k != "numpy"}
                    if "ort" in cont and ref_name and not max_err(cont["ort"](), cont[ref_name]()) <= 10 * tol:
                        # a peer that computes something else is left out, not timed
                        print(f"  {which:8s} {c.name:22s} note: ONNX Runtime's result differs; not timed")
                        pair.pop("ort")
                    ort = pair.pop("ort", None)
                    res = run_timed(args, pair)
                    if ort is not None:
                        # on its own, after the others: with spinning on (its
                        # default, its best), ONNX Runtime's idle intra-op
                        # threads keep spinning after its calls, and on 2 cores
                        # they held a core through the next library's block
                        # (AMD EPYC, AVX-512, 2 threads: cconv's 1x1 layer 2.0
                        # ms beside torch alone, 8.0 ms median with ONNX
                        # Runtime's blocks interleaved)
                        res.update(run_timed(args, {"ort": ort}))
                        cont.pop("ort")
                        del ort
                    if "numpy" in cont:  # on its own: see the module docstring
                        res.update(run_timed(args, {"numpy": cont["numpy"]}))
                except Exception as e:   # noqa: BLE001  one broken case must not end the run
                    row["backend"] += f" (ERROR {type(e).__name__}: {e})"
                    rows.append(row)
                    failures.append(f"{which} {c.name} T={t}: {type(e).__name__}: {e}")
                    print(f"  {which:8s} {c.name:22s} ERROR {type(e).__name__}: {e}", flush=True)
                    continue
                bad = ref_name is not None and not err <= tol
                med = {k: float(np.median(v[0])) for k, v in res.items()}
                flops = c.flops() * (3 if which == "backward" else 1)
                gf = flops / med["cconv"] / 1e9
                gbs = traffic_bytes(which, x, w, b, got) / med["cconv"] / 1e9
                row.update({
                    "cconv ms": _ms(res["cconv"][0]),
                    "torch ms": _ms(res["torch"][0]) if "torch" in res else "-",
                    "numpy ms": _ms(res["numpy"][0]) if "numpy" in res else "-",
                    "ort ms": _ms(res["ort"][0]) if "ort" in res else "-",
                    "cconv/ort": f"{med['cconv'] / med['ort']:.2f}" if "ort" in med else "-",
                    "cconv GFLOP/s": f"{gf:.1f}",
                    "_gf": gf,
                    "GB/s": f"{gbs:.1f}",
                    "_gbs": gbs,
                    "cconv/torch": f"{med['cconv'] / med['torch']:.2f}" if "torch" in med else "-",
                    "cconv/numpy": f"{med['cconv'] / med['numpy']:.2f}" if "numpy" in med else "-",
                    "faults/call": f"{res['cconv'][1]:.0f}",
                    "torch faults": f"{res['torch'][1]:.0f}" if "torch" in res else "-",
                    "err": f"{err:.1e}" + (" FAIL" if bad else ""),
                })
                if bad:
                    failures.append(f"{which} {c.name} T={t}: relative error {err:.1e} > {tol:.0e}")
                if "torch" in med:
                    r_torch.append(med["cconv"] / med["torch"])
                if "numpy" in med:
                    r_np.append(med["cconv"] / med["numpy"])
                if "ort" in med:
                    r_ort.append(med["cconv"] / med["ort"])
                rows.append(row)
                t_rows.append(row)
                print(f"  {which:8s} {c.name:22s} {row['backend']:24s} cconv {row['cconv ms']:>18s} ms"
                      f"  torch {row['torch ms']:>18s}  numpy {row['numpy ms']:>18s}"
                      f"  {gf:7.1f} GFLOP/s  faults/call {row['faults/call']}  err {row['err']}", flush=True)
            summary.append((which, t, gmean(r_torch), len(r_torch), gmean(r_np), len(r_np),
                            gmean(r_ort), len(r_ort)))
        for k, v in gemm_ceiling(args.dtype, args.repeat).items():
            ceil[k] = max(v, ceil.get(k, 0.0))
        for k, v in copy_ceiling(args.repeat).items():
            copy[k] = max(v, copy.get(k, 0.0))
        for k, (size, v) in cache_copy_ceiling(args.repeat).items():
            cache[k] = (size, max(v, cache.get(k, (size, 0.0))[1]))
        copy_val = max(copy.values())
        ceilings[t] = (ceil, copy, cache)
        ceil_name, ceil_val = next(iter(ceil.items())) if ceil else ("none", float("nan"))
        print(f"[T={t}] GEMM ceiling (best of before/after): "
              + ", ".join(f"{k} = {v:.1f} GFLOP/s" for k, v in ceil.items())
              + f"; % ceil uses {ceil_name}", flush=True)
        print(f"[T={t}] copy bandwidth (best of before/after): "
              + ", ".join(f"{k} = {v:.1f} GB/s" for k, v in copy.items())
              + "; % copy uses the best", flush=True)
        if cache:
            print(f"[T={t}] {cache_line(cache)}", flush=True)
        for row in t_rows:
            row["% ceil"] = f"{100 * row['_gf'] / ceil_val:.0f}%" if math.isfinite(ceil_val) else "-"
            row["% copy"] = f"{100 * row['_gbs'] / copy_val:.0f}%"
    return rows, summary, ceilings


def cache_line(cache):
    """'L2 1024 KiB = 250.1 GB/s, L3 32768 KiB = 120.3 GB/s' (benches/targets.py reads it)."""
    return ", ".join(f"{k} {size >> 10} KiB = {v:.1f} GB/s" for k, (size, v) in cache.items())


def gpu_line():
    """The GPU, CuPy and CUDA versions, for the machine line."""
    try:
        import cupy as cp
        name = cp.cuda.runtime.getDeviceProperties(0)["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        rt = cp.cuda.runtime.runtimeGetVersion()
        tf = "" if torch is None else "; torch's TF32 off"
        return f"GPU {name}, CuPy {cp.__version__}, CUDA runtime {rt // 1000}.{rt % 1000 // 10}{tf}"
    except Exception as e:   # noqa: BLE001
        return f"GPU: none usable ({type(e).__name__})"


def run_cuda(args, cases, sets, failures):
    """cconv on CuPy arrays vs torch on CUDA; a clear skip when either is absent."""
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as e:   # noqa: BLE001
        print(f"--cuda: skipped: CuPy with a CUDA device is not available ({type(e).__name__}: {e})")
        return [], []
    has_tc = torch is not None and torch.cuda.is_available()
    if not has_tc:
        print("--cuda: torch has no CUDA here; timing cconv on CuPy alone")
    else:
        # torch's CUDA convolutions and matrix products default to TF32 on
        # tensor cores (10-bit mantissa): the float32 comparison is against
        # full float32 arithmetic, as cconv computes
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        print("--cuda: torch with TF32 off (torch.backends.cudnn.allow_tf32 = False)")
    sync = cp.cuda.Device().synchronize
    if has_tc:
        def sync():   # noqa: F811
            cp.cuda.Device().synchronize()
            torch.cuda.synchronize()
    rows, summary = [], []
    tol = TOL[args.dtype]
    for which in sets:
        ratios = []
        for c in cases:
            x, w, b, gy = c.arrays(args.dtype)
            gx_, gw_, gb_, ggy = (cp.asarray(a) for a in (x, w, b, gy))
            kw = c.kwargs()
            cfn = getattr(cconv, c.func_name)
            cont = {}
            if which == "forward":
                cont["cconv"] = lambda: cfn(gx_, gw_, gb_, **kw)
            elif hasattr(cconv, "convolution_backward"):
                cargs = c.conv_args()

                def c_bwd():
                    y = cfn(gx_, gw_, gb_, **kw)
                    return (y,) + tuple(cconv.convolution_backward(ggy, gx_, gw_, [c.c_out], *cargs, MASK))
                cont["cconv"] = c_bwd
            else:
                continue
            if has_tc:
                tfn = getattr(F, c.func_name)
                tx, tw, tb = (torch.from_numpy(a.copy()).cuda() for a in (x, w, b))
                tgy = torch.from_numpy(gy).cuda()
                if which == "forward":
                    def t_fwd():
                        with torch.no_grad():
                            return tfn(tx, tw, tb, **kw)
                    cont["torch"] = t_fwd
                else:
                    for tt in (tx, tw, tb):
                        tt.requires_grad_(True)

                    def t_bwd():
                        tx.grad = tw.grad = tb.grad = None
                        y = tfn(tx, tw, tb, **kw)
                        y.backward(tgy)
                        return y, tx.grad, tw.grad, tb.grad
                    cont["torch"] = t_bwd
            row = {"set": which + "/cuda", "case": c.name, "T": "-",
                   "backend": backend_of(c, gx_, gw_, gb_, which == "backward")}
            try:
                got = cont["cconv"]()
                got = tuple(cp.asnumpy(a) for a in (got if isinstance(got, tuple) else (got,)))
                err = max_err(got, tuple(t.cpu() for t in (cont["torch"]() if which == "backward"
                                                           else (cont["torch"](),)))) if has_tc else float("nan")
                res = run_timed(args, cont, sync=sync)
            except Exception as e:   # noqa: BLE001
                row["backend"] += f" (ERROR {type(e).__name__}: {e})"
                rows.append(row)
                failures.append(f"{which}/cuda {c.name}: {type(e).__name__}: {e}")
                continue
            med = {k: float(np.median(v[0])) for k, v in res.items()}
            gf = c.flops() * (3 if which == "backward" else 1) / med["cconv"] / 1e9
            row.update({"cconv ms": _ms(res["cconv"][0]),
                        "torch ms": _ms(res["torch"][0]) if "torch" in res else "-",
                        "cconv GFLOP/s": f"{gf:.1f}",
                        "cconv/torch": f"{med['cconv'] / med['torch']:.2f}" if "torch" in med else "-",
                        "err": f"{err:.1e}" + (" FAIL" if has_tc and not err <= tol else "")})
            if has_tc and not err <= tol:
                failures.append(f"{which}/cuda {c.name}: relative error {err:.1e} > {tol:.0e}")
            if "torch" in med:
                ratios.append(med["cconv"] / med["torch"])
            rows.append(row)
            print(f"  cuda {which:8s} {c.name:22s} {row['backend']:20s} cconv {row['cconv ms']} ms  "
                  f"torch {row['torch ms']}", flush=True)
        summary.append((which + "/cuda", "-", gmean(ratios), len(ratios), float("nan"), 0,
                        float("nan"), 0))
    return rows, summary


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="cases: " + ", ".join(CASES) + "; extra: " + ", ".join(EXTRA))
    ap.add_argument("--cases", default=None, metavar="NAME,..", help="only these cases (default: all)")
    ap.add_argument("--set", choices=("forward", "backward", "all"), default="forward")
    ap.add_argument("--threads", default="1,2", metavar="T,..",
                    help="thread counts to run at (default 1,2)")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--repeat", type=int, default=15,
                    help="timed calls per contender (default 15: with --timing blocks, three blocks of "
                         "5, so that one slow block does not move the median)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed calls per contender first (default 2)")
    ap.add_argument("--timing", choices=("interleaved", "blocks"), default="interleaved",
                    help="interleaved: cconv and torch alternate call by call (default); blocks: each "
                         "makes --block calls in a row, the blocks alternating (see run_blocks)")
    ap.add_argument("--block", type=int, default=5, help="timed calls per block with --timing blocks (default 5)")
    ap.add_argument("--no-numpy", action="store_true", help="leave the NumPy baseline out")
    ap.add_argument("--no-ort", action="store_true",
                    help="leave ONNX Runtime out (it is timed, forward only, when installed)")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--out", default=None, metavar="FILE",
                    help="write the markdown table and a machine line to FILE")
    ap.add_argument("--cuda", action="store_true",
                    help="also time cconv on CuPy arrays vs torch on CUDA (skipped when absent)")
    ap.add_argument("--cuda-only", action="store_true",
                    help="time the CUDA path alone (implies --cuda; no CPU runs)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--small", action="store_true",
                    help="the small zoo-like layers (benchmarks/_cases.py SMALL) instead of the default set")
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="keep N other processes spinning on the CPUs during the run (a loaded machine)")
    ap.add_argument("--extra", action="store_true",
                    help="also the extra cases (layers outside the default set: benchmarks/_cases.py EXTRA)")
    args = ap.parse_args(argv)
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        ap.error(f"--threads: expected integers like 1,2, got {args.threads!r}")
    if not args.threads or min(args.threads) < 1:
        ap.error("--threads: each count must be >= 1")
    if args.repeat < 1 or args.warmup < 0 or args.block < 1:
        ap.error("--repeat and --block must be >= 1 and --warmup >= 0")
    return args, ap


def main(argv=None):
    args, ap = parse_args(argv)
    known = {**CASES, **EXTRA, **SMALL}
    if args.list:
        for c in known.values():
            print(f"{c.name:22s} {c.func_name:17s} {c.describe():42s} {c.flops() / 1e9:6.3f} GFLOP  {c.note}")
        return 0
    if args.cases:
        names = [s.strip() for s in args.cases.split(",") if s.strip()]
        bad = [s for s in names if s not in known]
        if bad:
            ap.error(f"unknown case(s): {', '.join(bad)}; known: {', '.join(known)}")
        cases = [known[s] for s in names]
    elif args.small:
        cases = list(SMALL.values())
    else:
        cases = list(CASES.values()) + (list(EXTRA.values()) if args.extra else [])
    sets = ["forward", "backward"] if args.set == "all" else [args.set]
    busy = start_busy(args.busy)
    try:
        return _run_main(args, cases, sets)
    finally:
        stop_busy(busy)


def start_busy(n):
    """n processes spinning in Python (the load of a shared machine)."""
    import subprocess
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_busy(procs):
    for p in procs:
        p.kill()
        p.wait()


def _run_main(args, cases, sets):
    mline = machine_line(args)
    if args.busy:
        mline += f"; {args.busy} busy processes spinning beside the run"
    if args.cuda or args.cuda_only:
        mline += "; " + gpu_line()
    print(mline)
    if torch is None:
        print("note: torch is not installed; the torch columns are empty")
    failures = []
    rows, summary, ceilings = ([], [], {}) if args.cuda_only else run_cpu(args, cases, sets, failures)
    if args.cuda or args.cuda_only:
        crow, csum = run_cuda(args, cases, sets, failures)
        rows += crow
        summary += csum
    table = format_table(rows, args.markdown)
    lines = ["", table, "",
             "ms: median (min) per call; ratios: median time of cconv / the other (< 1: cconv faster)"]
    for which, t, gt, nt, gn, nn, go, no in summary:
        parts = [f"cconv/{nm} {g:.2f} ({n} cases)"
                 for nm, g, n in (("torch", gt, nt), ("onnxruntime", go, no), ("numpy", gn, nn)) if n]
        lines.append(f"geometric mean, {which}, T={t}: " + (", ".join(parts) or "no ratios"))
    for t, (ceil, copy, cache) in ceilings.items():
        lines.append(f"GEMM ceiling, T={t}: " + ", ".join(f"{k} = {v:.1f} GFLOP/s" for k, v in ceil.items())
                     + " (% ceil is against the first)")
        lines.append(f"copy bandwidth, T={t}: " + ", ".join(f"{k} = {v:.1f} GB/s" for k, v in copy.items())
                     + " (% copy is against the best)")
        if cache:
            lines.append(f"cache copy bandwidth, T={t}: {cache_line(cache)}")
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as f:
            f.write(mline + "\n\n" + format_table(rows, True) + "\n" + "\n".join(lines[3:]) + "\n")
        print(f"wrote {args.out}")
    if failures:
        print(f"\n{len(failures)} FAILED (wrong result or error):\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
