"""Every method that can run each benchmark layer, timed, against the
default choice and benchmark mode's pick.

    python benches/method_table.py [--threads 2] [--ops forward,grad_input,grad_weight]
                                   [--extra] [--cases a,b] [--dtype float32] [--repeat 7]
                                   [--markdown] [--out FILE] [--kind-table [PATH]] [--verify N]

For every case (benches/benchmarks/_cases.py; --extra adds the second set)
and operation: the method ``cconv.select_backend`` names (the default), the
median time of every method the dispatcher lists as able to compute it
(each forced with ``backend=``, timed in blocks of calls, the blocks
interleaved across methods), the fastest, how much faster than the default
it is, and what benchmark mode (``cconv.benchmark()``) picked on a fresh
first call.  Times are medians over the blocks; the machine's load is
printed with the CPU and ISA, so a run can be judged.

``--kind-table`` also writes this CPU kind's table of defaults
(``cconv/kinds/<kind>.json``, read by ``cconv/_kind.py``): the problems on
which the fastest method beat the dispatcher's rules by ``--margin`` or
more, at this thread count (entries of other thread counts already in the
file are kept); with ``--verify N`` an entry is kept only where default and
winner, timed again alternating N times, still differ by the margin.  Run
it with ``CCONV_KIND_DEFAULTS=0``, so that "default" is the rules' choice
and not an older table's::

    CCONV_KIND_DEFAULTS=0 python benches/method_table.py --extra --threads 2 \
        --ops forward,grad_input,grad_weight --markdown --kind-table
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks._cases import CASES, EXTRA  # noqa: E402

import cconv  # noqa: E402
from cconv import _autotune, _dispatch, _kind, _tuning  # noqa: E402
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


def problem(c, op, x, w, b):
    s, p, d, tr, opad, g = c.conv_args()
    dt = np.dtype(x.dtype)
    prm = make_params(x.shape, w.shape, None if b is None else b.shape, s, p, d, tr, opad, g,
                      "method_table", compute_dtype(dt), dt)
    return Problem(prm, np, op)


def candidates(c, op, x, w, b):
    return _dispatch.candidates(problem(c, op, x, w, b)._replace(need_backward=op != "forward"))


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
    return default, med, best, picked, problem(c, op, x, w, b)


def verify(c, op, dtype, default, best, rounds, block_s=0.15):
    """default / best timed again: the two alternate ``rounds`` times, in
    blocks of about ``block_s`` seconds; the median ratio of the pairs."""
    x, w, b, gy = c.arrays(dtype)
    fd = lambda: call(c, op, x, w, b, gy, default)   # noqa: E731
    fb = lambda: call(c, op, x, w, b, gy, best)      # noqa: E731
    reps = {}
    for m, f in (("d", fd), ("b", fb)):
        f()
        reps[m] = max(1, min(200, int(block_s / max(timed(f, 1), 1e-6))))
    ratios = []
    for i in range(rounds):
        order = (("d", fd), ("b", fb)) if i % 2 == 0 else (("b", fb), ("d", fd))
        t = {m: timed(f, reps[m]) for m, f in order}
        ratios.append(t["d"] / t["b"])
    return float(np.median(ratios))


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
    ap.add_argument("--kind-table", nargs="?", const="auto", default="",
                    help="write this CPU kind's table of defaults (default path: cconv/kinds/<kind>.json)")
    ap.add_argument("--margin", type=float, default=1.1,
                    help="a table entry needs default / fastest >= this (default 1.1)")
    ap.add_argument("--verify", type=int, default=0, metavar="N",
                    help="time each would-be table entry again, default and fastest alternating N "
                         "times (blocks of ~0.15 s), and keep it only if that median is also >= "
                         "--margin (default 0: no second measurement)")
    args = ap.parse_args(argv)
    if args.verify < 0 or args.repeat < 1 or args.threads < 1:
        ap.error("--verify must be >= 0, --repeat and --threads >= 1")
    if args.kind_table and os.environ.get("CCONV_KIND_DEFAULTS") != "0":
        ap.error("--kind-table: run with CCONV_KIND_DEFAULTS=0 (the rules' choice is the baseline)")
    cconv.set_num_threads(args.threads)
    allc = dict(CASES)
    if args.extra:
        allc.update(EXTRA)
    names = args.cases.split(",") if args.cases else list(allc)
    unknown = [n for n in names if n not in allc]
    if unknown:
        ap.error(f"--cases: unknown {', '.join(unknown)} (known: {', '.join(allc)}; --extra adds "
                 "the second set)")
    ops = [o for o in args.ops.split(",") if o]
    for o in ops:
        if o not in OPS:
            ap.error(f"--ops: {o!r} is not one of {', '.join(OPS)}")
    out = open(args.out, "w") if args.out else sys.stdout
    isa = cconv._kernels.isa()
    head = (f"{cpu_name()} ({isa} kernels, OpenBLAS {cconv._kernels.blas_corename()} kernel set), "
            f"{args.threads} threads, {args.dtype}, median of {args.repeat} "
            f"interleaved blocks, load average {os.getloadavg()[0]:.2f} at start")
    sep = "|" if args.markdown else " "
    if args.markdown:
        print(f"{head}\n", file=out)
        print("| case | op | default | ms | fastest | ms | default / fastest | benchmark mode | "
              "every method (ms) |", file=out)
        print("|---|---|---|---|---|---|---|---|---|", file=out)
    else:
        print(head, file=out)
    entries, measured = [], set()
    for nm in names:
        c = allc[nm]
        for op in ops:
            default, med, best, picked, q = measure(c, op, args.dtype, args.repeat)
            measured.add(json.dumps(_tuning.problem_key(q), sort_keys=True))
            second = ""
            if best != default and med[default] / med[best] >= args.margin:
                again = verify(c, op, args.dtype, default, best, args.verify) if args.verify else None
                if again is not None:
                    second = f" (again: {again:.2f}{'' if again >= args.margin else ', not kept'})"
                if again is None or again >= args.margin:
                    e = {"problem": _tuning.problem_key(q), "threads": args.threads,
                         "method": best.value, "default": default.value, "layer": nm,
                         "ms": {m.value: round(t, 4) for m, t in med.items()}}
                    if again is not None:
                        e["again"] = round(again, 3)
                    entries.append(e)
            every = ", ".join(f"{m.value} {t:.3g}" for m, t in sorted(med.items(), key=lambda kv: kv[1]))
            row = [nm, op, default.value, f"{med[default]:.3g}", best.value, f"{med[best]:.3g}",
                   f"{med[default] / med[best]:.2f}{second}", picked.value, every]
            if args.markdown:
                print("| " + " | ".join(row) + " |", file=out, flush=True)
            else:
                print(sep.join(row), file=out, flush=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}", file=out)
    if args.kind_table:
        write_kind_table(args.kind_table, entries, measured, args.threads, args.margin)


def write_kind_table(path, entries, measured, threads, margin):
    """This kind's table: the file's entries of other thread counts (or
    dtypes and problems not measured now) kept, this run's added."""
    kind = _kind.cpu_kind()
    if path == "auto":
        path = _kind.table_path(kind)
    keep = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
        if old.get("kind") != kind:
            sys.exit(f"{path} is the table of {old.get('kind')!r}, this CPU is {kind!r}")
        for e in old.get("entries", []):
            keep[_tuning.entry_key(e)] = e
    for k in [k for k in keep if k[1] == threads and k[0] in measured]:
        del keep[k]
    for e in entries:
        keep[_tuning.entry_key(e)] = e
    doc = _kind.document(kind, sorted(keep.values(), key=lambda e: (e["threads"], e.get("layer", ""),
                                                                   e["problem"]["op"])),
                         margin, datetime.date.today().isoformat())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{path}: {len(entries)} entries at {threads} threads ({len(keep)} in all)", file=sys.stderr)


if __name__ == "__main__":
    main()
