"""The ``cconv`` command.

``cconv bench`` times layers (a built-in set from well-known networks, or
your own with ``--layer SPEC`` / ``--layers-file FILE.json``), checks each
result against the float64 NumPy reference in :mod:`cconv._refconv`, and
exits non-zero when a result is off.  It prints a header naming the CPU,
the instruction set, the threads and the BLAS, then one row per layer as
soon as it is timed (min / median / IQR, GFLOP/s), optionally next to
PyTorch and ONNX Runtime timed in the same run (``--compare``); ``--json``
and ``--csv`` write machine-readable results to stdout (the table then goes
to stderr) and ``--plot FILE.png`` draws GFLOP/s and ratios per layer.
``cconv info`` prints :func:`cconv.show_config`.  Bare ``cconv`` prints
the help.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time

import numpy as np

from ._layer import SPEC_HELP, Layer, from_dict, parse_spec

__all__ = ["main", "Layer", "LAYERS"]


# Modest batch sizes: the default run (with the float64 reference check) stays
# well under a minute on two cores.
LAYERS = (
    Layer("resnet50_3x3", 2, 128, 128, (28, 28), (3, 3), padding=1,
          note="ResNet-50 layer2 3x3"),
    Layer("resnet50_1x1", 2, 256, 64, (56, 56), (1, 1),
          note="ResNet-50 layer1 1x1 reduce"),
    Layer("resnet50_3x3_s2", 2, 128, 128, (56, 56), (3, 3), stride=2, padding=1,
          note="ResNet-50 v1.5 downsampling 3x3"),
    Layer("resnet50_stem", 1, 3, 64, (224, 224), (7, 7), stride=2, padding=3,
          note="ResNet-50 7x7 stem"),
    Layer("mobilenetv2_dw", 4, 144, 144, (56, 56), (3, 3), padding=1, groups=144,
          note="MobileNetV2 depthwise 3x3"),
    Layer("dcgan_tconv", 4, 256, 128, (8, 8), (4, 4), stride=2, padding=1, transposed=True,
          note="DCGAN generator conv_transpose2d"),
    Layer("wav2vec_conv1d", 1, 512, 512, (1599,), (3,), stride=2,
          note="wav2vec 2.0 feature encoder conv1d"),
    Layer("c3d_conv3d", 1, 128, 128, (8, 14, 14), (3, 3, 3), padding=1,
          note="C3D-like conv3d 3x3x3"),
)

# IQR / median above this marks a layer's times as noisy
NOISE = 0.10


def _rel_err(y, ref):
    y = np.asarray(y, dtype=np.result_type(y, np.float64))
    den = np.linalg.norm(ref)
    return float(np.linalg.norm(y - ref) / den) if den else float(np.linalg.norm(y))


def _stats(ts) -> dict:
    a = np.asarray(ts, dtype=np.float64)
    q25, med, q75 = np.percentile(a, [25, 50, 75])
    return {"min_ms": float(a.min()) * 1e3, "median_ms": float(med) * 1e3,
            "iqr_ms": float(q75 - q25) * 1e3, "repeat": int(a.size)}


def _time_blocks(fns: dict, repeat: int, warmup: int = 1, rounds: int = 2) -> dict:
    """Per name, the times of ``repeat`` calls.  Each callable runs in
    blocks of its own consecutive calls, as a user's loop calls it (calls
    of different libraries taking turns would each wait for the other's
    thread pool, whose threads spin for a while after a call); a pause
    between blocks lets those threads sleep; the blocks take ``rounds``
    turns so that a slow phase of the machine hits every library alike."""
    ts: dict = {k: [] for k in fns}
    sizes = [repeat // rounds + (1 if r < repeat % rounds else 0) for r in range(rounds)]
    for n in sizes:
        for k, f in fns.items():
            if not n:
                continue
            time.sleep(0.02)
            for _ in range(warmup):
                f()
            for _ in range(n):
                t0 = time.perf_counter()
                f()
                ts[k].append(time.perf_counter() - t0)
    return ts


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_info() -> dict:
    """What a timing depends on: CPU, instruction set, threads, BLAS, load."""
    import cconv
    from . import _kernels
    from ._dispatch import simd_level

    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    try:
        blas = f"scipy-openblas64 {_kernels.blas_corename()}"
    except Exception:  # pragma: no cover - defensive
        blas = "scipy-openblas64"
    return {"cpu": _cpu_model(), "arch": platform.machine(), "isa": str(simd_level()),
            "threads": cconv.get_num_threads(), "cpu_count": os.cpu_count(), "blas": blas,
            "load_1min": load, "numpy": np.__version__, "cconv": cconv.__version__,
            "python": platform.python_version()}


def _backend_name(cconv, layer, x, w, b):
    try:
        be = cconv.select_backend(x, w, b, stride=layer.stride, padding=layer.padding,
                                  dilation=layer.dilation, transposed=layer.transposed,
                                  output_padding=layer.output_padding, groups=layer.groups)
    except Exception as e:  # report, do not die: the timing below is what matters
        return f"? ({type(e).__name__})"
    return getattr(be, "name", str(be)).lower()


def _own_layers(args) -> list:
    """The layers given by --layer and --layers-file (OSError, ValueError or
    TypeError for one that cannot be read)."""
    own = [parse_spec(spec) for spec in args.layer or []]
    if args.layers_file:
        with open(args.layers_file) as f:
            doc = json.load(f)
        items = doc.get("layers", doc) if isinstance(doc, dict) else doc
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list):
            raise ValueError("the file must hold a layer object, a list of them, or "
                             "{\"layers\": [...]}")
        own += [from_dict(d, f"layer{i + 1}") for i, d in enumerate(items)]
    return own


def _load_layers(args, err) -> list | None:
    """The layers to run: --layer / --layers-file, else the built-in ones
    (filtered by --layers).  None after printing the reason on ``err``."""
    try:
        own = _own_layers(args)
    except (OSError, ValueError, TypeError) as e:
        print(f"cconv bench: {e}", file=err)
        return None
    if own:
        return own
    layers = list(LAYERS)
    if args.layers:
        want = [s.strip() for s in args.layers.split(",") if s.strip()]
        unknown = [s for s in want if s not in {l.name for l in LAYERS}]
        if unknown:
            print(f"cconv bench: unknown layer(s) {', '.join(unknown)}; "
                  f"known: {', '.join(l.name for l in LAYERS)}", file=err)
            return None
        layers = [l for l in LAYERS if l.name in want]
    return layers


def cmd_bench(args) -> int:
    import cconv
    from cconv import _refconv

    machine_readable = args.json or args.csv
    out = sys.stderr if machine_readable else sys.stdout

    def say(*a):
        print(*a, file=out, flush=True)

    dtype = np.dtype(args.dtype).type
    tol = args.tol if args.tol is not None else (1e-4 if dtype is np.float32 else 1e-12)
    repeat = args.repeat if args.repeat is not None else (3 if args.quick else 7)
    if repeat < 1:
        say("cconv bench: --repeat must be >= 1")
        return 2
    if args.threads is not None:
        try:
            cconv.set_num_threads(args.threads)
        except ValueError as e:
            say(f"cconv bench: --threads: {e}")
            return 2
    peers = [p.strip() for p in (args.compare or "").split(",") if p.strip()]
    from ._peers import PEERS, make as make_peer
    bad = [p for p in peers if p not in PEERS]
    if bad:
        say(f"cconv bench: --compare: unknown peer(s) {', '.join(bad)}; known: {', '.join(PEERS)}")
        return 2
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            say("cconv bench: --plot needs matplotlib (pip install 'cconv[plot]')")
            return 2
    layers = _load_layers(args, out)
    if layers is None:
        return 2

    info = machine_info()
    threads = info["threads"]
    load = "?" if info["load_1min"] is None else f"{info['load_1min']:.2f}"
    say(f"cconv {info['cconv']} bench: {args.dtype}, min/median/IQR of {repeat} calls"
        f"{' (quick: batch 1)' if args.quick else ''}, checked against a float64 NumPy "
        f"reference (tolerance {tol:.0e})")
    say(f"CPU: {info['cpu']} ({info['arch']}, {info['cpu_count']} logical CPUs); ISA: "
        f"{info['isa']}; threads: {threads}; BLAS: {info['blas']}; load: {load}")
    peer_cols = "".join(f" {p[:11] + ' ms':>14} {'ratio':>6}" for p in peers)
    hdr = (f"{'layer':<22} {'problem':<34} {'backend':<15} {'min ms':>9} {'median ms':>9} "
           f"{'IQR%':>5} {'GFLOP/s':>8} {'rel.err':>8}{peer_cols}")
    say(hdr)
    say("-" * len(hdr))
    failures = 0
    noisy = []
    rows = []
    total_t0 = time.perf_counter()
    for layer in layers:
        batch = 1 if args.quick else layer.batch
        problem = layer.describe(batch)
        x, w, b, _ = layer.arrays(dtype, batch=batch, seed=args.seed)
        fn = getattr(cconv, layer.func_name)
        kw = layer.kwargs()
        backend = _backend_name(cconv, layer, x, w, b)
        row = {"name": layer.name, "problem": problem, "function": layer.func_name,
               "backend": backend, "flops": layer.flops(batch), "cconv": None}
        rows.append(row)
        try:
            y = fn(x, w, b, **kw)
        except Exception as e:
            failures += 1
            row["error"] = f"{type(e).__name__}: {e}"
            say(f"{layer.name:<22} {problem:<34} {backend:<15} ERROR {type(e).__name__}: {e}")
            continue
        fns = {"cconv": lambda: fn(x, w, b, **kw)}
        why = {}
        for p in peers:
            f, reason = make_peer(p, layer, x, w, b, threads)
            if f is None:
                why[p] = reason
            else:
                fns[p] = f
        ts = _time_blocks(fns, repeat)
        ref = _refconv.convolution_ref(x, w, b, layer.stride, layer.padding, layer.dilation,
                                       layer.transposed, layer.output_padding, layer.groups)
        if y.shape != ref.shape or y.dtype != x.dtype:
            failures += 1
            row["error"] = f"got {y.shape} {y.dtype}, expected {ref.shape} {x.dtype}"
            say(f"{layer.name:<22} {problem:<34} {backend:<15} FAIL: {row['error']}")
            continue
        err = _rel_err(y, ref)
        ok = bool(err <= tol and np.isfinite(err))
        failures += not ok
        st = _stats(ts["cconv"])
        st.update(gflops=layer.flops(batch) / (st["median_ms"] * 1e-3) / 1e9, rel_err=err, ok=ok)
        row["cconv"] = st
        spread = st["iqr_ms"] / st["median_ms"] if st["median_ms"] > 0 else 0.0
        if spread > NOISE:
            noisy.append(layer.name)
        cols = ""
        for p in peers:
            if p in fns:
                ps = _stats(ts[p])
                ps["gflops"] = layer.flops(batch) / (ps["median_ms"] * 1e-3) / 1e9
                ps["ratio"] = st["median_ms"] / ps["median_ms"]   # < 1: cconv is faster
                row[p] = ps
                cols += f" {ps['median_ms']:14.3f} {ps['ratio']:6.2f}"
            else:
                row[p] = {"skipped": why[p]}
                cols += f" {'n/a':>14} {'':>6}"
        say(f"{layer.name[:22]:<22} {problem[:34]:<34} {backend[:15]:<15} {st['min_ms']:9.3f} "
            f"{st['median_ms']:9.3f} {100 * spread:4.0f}{'!' if spread > NOISE else ' '} "
            f"{st['gflops']:8.1f} {err:8.1e}{cols}{'' if ok else '  FAIL (above tolerance)'}")
    say("-" * len(hdr))
    elapsed = time.perf_counter() - total_t0
    for p in peers:
        skipped = {r[p]["skipped"] for r in rows if isinstance(r.get(p), dict) and "skipped" in r[p]}
        for s in sorted(skipped):
            say(f"{p}: {s}")
        rs = [r[p]["ratio"] for r in rows if isinstance(r.get(p), dict) and "ratio" in r[p]]
        if rs:
            say(f"{p}: geometric mean of cconv/{p} median-time ratios {np.exp(np.mean(np.log(rs))):.2f} "
                f"over {len(rs)} layer(s) (< 1: cconv faster)")
    if noisy:
        say(f"warning: the times of {len(noisy)} layer(s) ({', '.join(noisy)}) spread by more than "
            f"{NOISE:.0%} (IQR/median, marked '!'): the machine is busy (load {load}) or its clock "
            f"varies; close other work, use --threads below the core count or raise --repeat")
    if failures:
        say(f"{failures} of {len(layers)} layer(s) FAILED ({elapsed:.1f} s)")
    else:
        say(f"all {len(layers)} layers match the reference ({elapsed:.1f} s)")

    result = {"machine": info, "dtype": args.dtype, "repeat": repeat, "tolerance": tol,
              "quick": bool(args.quick), "compare": peers, "noisy": noisy,
              "failures": failures, "layers": rows}
    if args.plot:
        try:
            _plot(result, args.plot)
            say(f"plot: {os.path.abspath(args.plot)}")
        except Exception as e:
            say(f"cconv bench: --plot failed: {type(e).__name__}: {e}")
            failures += 1
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.csv:
        _write_csv(result, sys.stdout)
    sys.stdout.flush()
    return 1 if failures else 0


def _write_csv(result: dict, f) -> None:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["layer", "problem", "impl", "backend", "min_ms", "median_ms", "iqr_ms", "gflops",
                "ratio_cconv_over_impl", "rel_err", "note"])
    for r in result["layers"]:
        for impl in ["cconv"] + result["compare"]:
            s = r.get(impl)
            if not isinstance(s, dict):
                w.writerow([r["name"], r["problem"], impl, r["backend"], "", "", "", "", "", "",
                            r.get("error", "")])
                continue
            if "skipped" in s:
                w.writerow([r["name"], r["problem"], impl, "", "", "", "", "", "", "", s["skipped"]])
                continue
            w.writerow([r["name"], r["problem"], impl, r["backend"] if impl == "cconv" else "",
                        f"{s['min_ms']:.6g}", f"{s['median_ms']:.6g}", f"{s['iqr_ms']:.6g}",
                        f"{s['gflops']:.6g}", f"{s['ratio']:.4g}" if "ratio" in s else "",
                        f"{s['rel_err']:.3g}" if "rel_err" in s else "", ""])


def _plot(result: dict, path: str) -> None:
    """GFLOP/s per layer and implementation, and cconv's time ratios."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result["layers"] if isinstance(r.get("cconv"), dict)]
    impls = ["cconv"] + [p for p in result["compare"]
                         if any(isinstance(r.get(p), dict) and "gflops" in r[p] for r in rows)]
    names = [r["name"] for r in rows]
    nplots = 2 if len(impls) > 1 else 1
    fig, axes = plt.subplots(nplots, 1, figsize=(max(6.0, 1.2 * len(rows) + 3), 3.6 * nplots),
                             squeeze=False)
    xs = np.arange(len(rows))
    width = 0.8 / len(impls)
    ax = axes[0][0]
    for i, impl in enumerate(impls):
        vals = [r[impl]["gflops"] if isinstance(r.get(impl), dict) and "gflops" in r[impl]
                else 0.0 for r in rows]
        ax.bar(xs + (i - (len(impls) - 1) / 2) * width, vals, width, label=impl)
    ax.set_ylabel("GFLOP/s (median)")
    ax.set_xticks(xs)
    ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    m = result["machine"]
    ax.set_title(f"cconv {m['cconv']} {result['dtype']}: {m['cpu']}, {m['isa']}, "
                 f"{m['threads']} thread(s)", fontsize=9)
    ax.legend(fontsize=8)
    if nplots == 2:
        ax = axes[1][0]
        peers = impls[1:]
        width = 0.8 / len(peers)
        for i, p in enumerate(peers):
            vals = [r[p]["ratio"] if isinstance(r.get(p), dict) and "ratio" in r[p] else np.nan
                    for r in rows]
            ax.bar(xs + (i - (len(peers) - 1) / 2) * width, vals, width, label=f"cconv / {p}")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_ylabel("cconv time / peer time\n(median, log; < 1: cconv faster)")
        ax.set_xticks(xs)
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cmd_info(args) -> int:
    import cconv
    cconv.show_config()
    return 0


def cmd_tune(args) -> int:
    """Time every method that can run each layer and keep the winners in the
    tuning file (cconv.tune)."""
    import cconv
    from . import _tuning
    from ._zoo import CASES, EXTRA, SMALL

    err = sys.stderr
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    try:
        layers: list = _own_layers(args)
        for path in args.recorded or []:
            layers += _tuning.read_recorded(path)
    except (OSError, ValueError, TypeError) as e:
        print(f"cconv tune: {e}", file=err)
        return 2
    if args.builtin or not layers:
        sets = {"default": CASES, "extra": EXTRA, "small": SMALL}
        for name in (args.builtin or "default,extra").split(","):
            if name.strip() not in sets:
                print(f"cconv tune: unknown built-in set {name!r}; known: {', '.join(sets)}", file=err)
                return 2
            layers += list(sets[name.strip()].values())
    if args.threads is not None:
        cconv.set_num_threads(args.threads)
    path = args.file or _tuning.default_path()
    m = _tuning.machine()
    print(f"cconv tune: {m['cpu']} ({m['isa']}), {cconv.get_num_threads()} threads, "
          f"{len(layers)} layer(s) x {len(ops)} op(s) x {args.dtype} -> {path}", flush=True)
    try:
        results = cconv.tune(layers, ops=ops, dtypes=(args.dtype,), file=None if args.dry_run else path,
                             repeat=args.repeat, save=not args.dry_run)
    except (ValueError, TypeError) as e:
        print(f"cconv tune: {e}", file=err)
        return 2
    for r in results:
        pr = r["problem"]
        what = (f"{pr['op']:11s} {'T' if pr['transposed'] else ' '} "
                f"{pr['batch']}x{pr['c_in']}x{'x'.join(map(str, pr['in_size']))} -> {pr['c_out']} "
                f"k{'x'.join(map(str, pr['kernel']))} s{'x'.join(map(str, pr['stride']))} g{pr['groups']}")
        print(f"  {what:60s} {r['method']:24s} {r['ms'][r['method']]:9.3f} ms  "
              f"default {r['default']} x{r['speedup']:.2f}", flush=True)
    faster = [r for r in results if r["method"] != r["default"]]
    print(f"cconv tune: {len(results)} problems, {len(faster)} where another method beat the default"
          + ("" if args.dry_run else f"; written to {path}"), flush=True)
    return 0


def _threads_arg(s):
    try:
        n = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {n}")
    return n


def _build_parser():
    p = argparse.ArgumentParser(
        prog="cconv",
        description="cconv: PyTorch-compatible convolution for NumPy arrays.",
        epilog="Examples: cconv bench --quick | cconv bench --layer '8x64x56x56 128 k3 p1' "
               "--compare torch --json | cconv tune --builtin default | cconv info")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="{bench,tune,info}")
    b = sub.add_parser(
        "bench", help="time and check layers (built-in or your own), optionally against torch "
                      "and ONNX Runtime",
        description="Time layers, check each against a float64 NumPy reference, print backend, "
                    "min/median/IQR and GFLOP/s. Rows are printed as each layer finishes. Exits 1 "
                    "when a result is above tolerance, 2 on bad arguments.",
        epilog="LAYER SPEC: " + SPEC_HELP + ". JSON file: a list of {\"spec\": ..., \"name\": ...} "
               "objects or of Layer fields (name, batch, c_in, c_out, size, kernel, stride, "
               "padding, dilation, groups, transposed, output_padding).")
    b.add_argument("--threads", type=_threads_arg, default=None,
                   help="threads for cconv and the peers (cconv.set_num_threads); default: cconv's default")
    b.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    b.add_argument("--repeat", type=int, default=None, help="timed calls per layer (default 7, --quick 3)")
    b.add_argument("--quick", action="store_true", help="batch 1 and fewer repeats")
    b.add_argument("--layers", default=None, metavar="NAME,..",
                   help="run only these built-in layers: " + ", ".join(l.name for l in LAYERS))
    b.add_argument("--layer", action="append", metavar="SPEC",
                   help="time your own layer, e.g. '8x64x56x56 128 k3 p1' (repeatable; see below)")
    b.add_argument("--layers-file", metavar="FILE.json", help="time the layers listed in a JSON file")
    b.add_argument("--compare", metavar="PEER,..",
                   help="also time these in the same run when installed: torch, onnxruntime")
    fmt = b.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true",
                     help="write the results as JSON to stdout (the table goes to stderr)")
    fmt.add_argument("--csv", action="store_true",
                     help="write the results as CSV to stdout (the table goes to stderr)")
    b.add_argument("--plot", metavar="FILE.png",
                   help="draw GFLOP/s and time ratios per layer (needs matplotlib: cconv[plot])")
    b.add_argument("--tol", type=float, default=None,
                   help="relative error tolerance (default 1e-4 float32, 1e-12 float64)")
    b.add_argument("--seed", type=int, default=0)
    b.set_defaults(func=cmd_bench)
    t = sub.add_parser(
        "tune", help="time every method for layers on this machine and keep the winners",
        description="Time every method cconv can run each layer with and write the fastest to the "
                    "tuning file, which cconv loads at import (CCONV_TUNE_FILE, default under the "
                    "user's cache directory).  Layers: --layer / --layers-file / --recorded, else "
                    "the built-in sets of well-known networks.",
        epilog="LAYER SPEC: " + SPEC_HELP + ".  --recorded takes the file a "
               "cconv.record_layers(path) block wrote (the problems a program ran).")
    t.add_argument("--layer", action="append", metavar="SPEC", help="a layer to tune (repeatable)")
    t.add_argument("--layers-file", metavar="FILE.json", help="the layers listed in a JSON file")
    t.add_argument("--recorded", action="append", metavar="FILE.json",
                   help="the problems a cconv.record_layers(FILE.json) block recorded")
    t.add_argument("--builtin", metavar="SET,..",
                   help="built-in sets to tune: default, extra, small (default: default,extra "
                        "when no layer is given)")
    t.add_argument("--ops", default="forward",
                   help="operations: forward, grad_input, grad_weight (comma-separated)")
    t.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    t.add_argument("--threads", type=_threads_arg, default=None, help="threads to tune for")
    t.add_argument("--repeat", type=int, default=5, help="timed blocks per method")
    t.add_argument("--file", metavar="PATH", help="the tuning file (default: cconv's)")
    t.add_argument("--dry-run", action="store_true", help="time and print, write nothing")
    t.set_defaults(func=cmd_tune)
    i = sub.add_parser("info", help="print the build and runtime configuration (cconv.show_config)")
    i.set_defaults(func=cmd_info)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.version:
        import cconv
        print(getattr(cconv, "__version__", "?"))
        return 0
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:        # 'cconv info | head': not an error worth a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
