"""The ``cconv`` command.

``cconv bench`` (the default) times a fixed set of layers from well-known
networks, checks each result against the float64 NumPy reference in
:mod:`cconv._refconv`, and exits non-zero when a result is off.
``cconv info`` prints :func:`cconv.show_config`.
"""

from __future__ import annotations

import argparse
import sys
import time
import numpy as np

from ._layer import Layer

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


def _rel_err(y, ref):
    y = np.asarray(y, dtype=np.result_type(y, np.float64))
    den = np.linalg.norm(ref)
    return float(np.linalg.norm(y - ref) / den) if den else float(np.linalg.norm(y))


def _time_call(fn, repeat, warmup):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def _backend_name(cconv, layer, x, w, b):
    sel = getattr(cconv, "select_backend", None)
    if sel is None:
        return "?"
    try:
        be = sel(x, w, b, stride=layer.stride, padding=layer.padding, dilation=layer.dilation,
                 transposed=layer.transposed, output_padding=layer.output_padding,
                 groups=layer.groups)
    except Exception as e:  # report, do not die: the timing below is what matters
        return f"? ({type(e).__name__})"
    return getattr(be, "name", str(be))


def cmd_bench(args) -> int:
    import cconv
    from cconv import _refconv

    dtype = np.dtype(args.dtype).type
    tol = args.tol if args.tol is not None else (1e-4 if dtype is np.float32 else 1e-12)
    repeat = args.repeat if args.repeat is not None else (3 if args.quick else 7)
    if repeat < 1:
        print("cconv bench: --repeat must be >= 1", file=sys.stderr)
        return 2
    if args.threads is not None:
        try:
            cconv.set_num_threads(args.threads)
        except ValueError as e:
            print(f"cconv bench: --threads: {e}", file=sys.stderr)
            return 2
    layers = LAYERS
    if args.layers:
        want = [s.strip() for s in args.layers.split(",") if s.strip()]
        unknown = [s for s in want if s not in {l.name for l in LAYERS}]
        if unknown:
            print(f"cconv bench: unknown layer(s) {', '.join(unknown)}; "
                  f"known: {', '.join(l.name for l in LAYERS)}", file=sys.stderr)
            return 2
        layers = [l for l in LAYERS if l.name in want]

    get_threads = getattr(cconv, "get_num_threads", None)
    nthreads = get_threads() if get_threads else "?"
    print(f"cconv {getattr(cconv, '__version__', '?')} bench: {args.dtype}, {nthreads} thread(s), "
          f"median of {repeat}{' (quick: batch 1)' if args.quick else ''}, "
          f"checked against a float64 NumPy reference (tolerance {tol:.0e})")
    hdr = f"{'layer':<18} {'problem':<34} {'backend':<24} {'median ms':>9} {'GFLOP/s':>8} {'rel.err':>9}"
    print(hdr)
    print("-" * len(hdr))
    failures = 0
    total_t0 = time.perf_counter()
    for layer in layers:
        batch = 1 if args.quick else layer.batch
        x, w, b, _ = layer.arrays(dtype, batch=batch, seed=args.seed)
        fn = getattr(cconv, layer.func_name)
        kw = layer.kwargs()
        backend = _backend_name(cconv, layer, x, w, b)
        try:
            y = fn(x, w, b, **kw)
            ts = _time_call(lambda: fn(x, w, b, **kw), repeat, warmup=1)
        except Exception as e:
            failures += 1
            print(f"{layer.name:<18} {layer.describe(batch):<34} {backend:<24} "
                  f"ERROR {type(e).__name__}: {e}")
            continue
        ref = _refconv.convolution_ref(x, w, b, layer.stride, layer.padding, layer.dilation,
                                       layer.transposed, layer.output_padding, layer.groups)
        if y.shape != ref.shape or y.dtype != x.dtype:
            failures += 1
            print(f"{layer.name:<18} {layer.describe(batch):<34} {backend:<24} "
                  f"FAIL: got {y.shape} {y.dtype}, expected {ref.shape} {x.dtype}")
            continue
        err = _rel_err(y, ref)
        ok = err <= tol and np.isfinite(err)
        failures += not ok
        med = float(np.median(ts))
        gflops = layer.flops(batch) / med / 1e9
        print(f"{layer.name:<18} {layer.describe(batch):<34} {backend:<24} {med * 1e3:9.3f} "
              f"{gflops:8.1f} {err:9.1e}{'' if ok else '  FAIL (above tolerance)'}")
    print("-" * len(hdr))
    elapsed = time.perf_counter() - total_t0
    if failures:
        print(f"{failures} of {len(layers)} layer(s) FAILED ({elapsed:.1f} s)")
        return 1
    print(f"all {len(layers)} layers match the reference ({elapsed:.1f} s)")
    return 0


def cmd_info(args) -> int:
    import cconv
    cconv.show_config()
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
        description="cconv: PyTorch-compatible convolution for NumPy arrays. "
                    "Without a subcommand, runs 'bench'.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="{bench,info}")
    b = sub.add_parser("bench", help="time and check a set of layers from common networks (default)",
                       description="Time a set of layers from common networks, check each against "
                                   "a float64 NumPy reference, print backend, median time and GFLOP/s. "
                                   "Exits 1 when a result is above tolerance.")
    b.add_argument("--threads", type=_threads_arg, default=None,
                   help="threads for cconv (cconv.set_num_threads); default: cconv's default")
    b.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    b.add_argument("--repeat", type=int, default=None, help="timed calls per layer (default 7, --quick 3)")
    b.add_argument("--quick", action="store_true", help="batch 1 and fewer repeats")
    b.add_argument("--layers", default=None, metavar="NAME,..",
                   help="run only these layers: " + ", ".join(l.name for l in LAYERS))
    b.add_argument("--tol", type=float, default=None,
                   help="relative error tolerance (default 1e-4 float32, 1e-12 float64)")
    b.add_argument("--seed", type=int, default=0)
    b.set_defaults(func=cmd_bench)
    i = sub.add_parser("info", help="print the build and runtime configuration (cconv.show_config)")
    i.set_defaults(func=cmd_info)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    if not argv or (argv[0] not in ("bench", "info", "-h", "--help", "--version")):
        argv.insert(0, "bench")       # 'cconv --quick' means 'cconv bench --quick'
    args = parser.parse_args(argv)
    if args.version:
        import cconv
        print(getattr(cconv, "__version__", "?"))
        return 0
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:        # 'cconv info | head': not an error worth a traceback
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
