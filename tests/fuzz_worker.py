"""The child process of tests/test_fuzz.py: reads one case a line (JSON) on
stdin, runs it and answers one JSON line: {"ok": kind} where kind is "ok",
"ValueError", "TypeError" or "MemoryError" (the last only for a case with
huge parameters), else {"bad": description} (another exception, or an
input array the call wrote to).  A crash or a hang shows as no answer."""
from __future__ import annotations

import json
import os
import resource
import sys

import numpy as np

import cconv

DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64,
          "complex64": np.complex64, "complex128": np.complex128, "int32": np.int32, "bool": np.bool_}


def make_array(spec, seed):
    """An array from its description: shape, dtype, layout, fill."""
    if spec is None:
        return None
    kind = spec.get("kind", "array")
    if kind == "none":
        return None
    if kind == "scalar":
        return 1.5
    if kind == "string":
        return "x"
    rng = np.random.default_rng(seed)
    shape = tuple(spec["shape"])
    dt = DTYPES[spec["dtype"]]
    layout = spec.get("layout", "c")
    if layout == "bcast":
        return np.broadcast_to(np.asarray(1, dt), shape)
    grow = (2,) * len(shape) if layout == "strided" else (1,) * len(shape)
    a = rng.standard_normal(tuple(s * g for s, g in zip(shape, grow)))
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal(a.shape)
    fill = spec.get("fill", "normal")
    if fill == "special" and a.size:
        flat = a.reshape(-1)
        flat[rng.integers(0, flat.size, max(1, flat.size // 7))] = rng.choice([np.nan, np.inf, -np.inf, 1e30, -0.0])
    elif fill == "zeros":
        a[...] = 0
    with np.errstate(all="ignore"):
        a = a.astype(dt)
    if layout == "strided":
        a = a[tuple(slice(None, None, 2) for _ in shape)]
    elif layout == "f":
        a = np.asfortranarray(a)
    elif layout == "cl" and a.ndim >= 3:
        a = np.moveaxis(np.ascontiguousarray(np.moveaxis(a, 1, -1)), -1, 1)
    elif layout == "neg" and a.ndim >= 1:
        a = np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    elif layout == "be":
        a = a.astype(a.dtype.newbyteorder(">"))
    elif layout == "readonly":
        a.flags.writeable = False
    elif layout == "list":
        return a.tolist()
    return a


def _shape_like(s):
    return isinstance(s, (list, tuple)) and all(type(e) is int and 0 <= e <= 64 for e in s)


def auto_gy(case, x, w, p, transposed=None):
    """The case's grad_output, or (gy_auto) ones of the forward's output
    shape and the case's grad_output dtype, where that forward runs."""
    gy = case_arrays_gy = case["_gy"]
    if not case.get("gy_auto") or not isinstance(x, np.ndarray) or not isinstance(w, np.ndarray):
        return gy
    try:
        y = cconv.convolution(np.zeros(x.shape), np.zeros(w.shape), None, p["stride"], p["padding"],
                              p["dilation"], p["transposed"] if transposed is None else transposed,
                              p["output_padding"], p["groups"])
    except (ValueError, TypeError):
        return gy
    dt = case_arrays_gy.dtype if isinstance(case_arrays_gy, np.ndarray) else np.float64
    return np.ones(y.shape, dt)


def run(case):
    arrays = {k: make_array(v, i) for i, (k, v) in enumerate(case["arrays"].items())}
    before = {k: a.copy() for k, a in arrays.items() if isinstance(a, np.ndarray) and k != "out"}
    p = case["params"]
    fn = case["fn"]
    A = arrays
    case["_gy"] = A.get("gy")
    kw = {}
    if "backend" in case:
        kw["backend"] = case["backend"]
    if fn.startswith("conv_transpose"):
        if A.get("out") is not None:
            kw["out"] = A["out"]
        getattr(cconv, fn)(A["x"], A["w"], A.get("b"), p["stride"], p["padding"], p["output_padding"],
                           p["groups"], p["dilation"], **kw)
    elif fn in ("conv1d", "conv2d", "conv3d"):
        if A.get("out") is not None:
            kw["out"] = A["out"]
        getattr(cconv, fn)(A["x"], A["w"], A.get("b"), p["stride"], p["padding"], p["dilation"],
                           p["groups"], **kw)
    elif fn == "convolution":
        cconv.convolution(A["x"], A["w"], A.get("b"), p["stride"], p["padding"], p["dilation"],
                          p["transposed"], p["output_padding"], p["groups"], **kw)
    elif fn == "convolution_backward":
        gy = auto_gy(case, A["x"], A["w"], p)
        cconv.convolution_backward(gy, A["x"], A["w"], p["bias_sizes"], p["stride"], p["padding"],
                                   p["dilation"], p["transposed"], p["output_padding"], p["groups"],
                                   p["mask"], **kw)
    elif fn == "convolution_double_backward":
        cconv.convolution_double_backward(A.get("ggI"), A.get("ggW"), A.get("ggb"),
                                          auto_gy(case, A["x"], A["w"], p), A["w"], A["x"],
                                          p["stride"], p["padding"], p["dilation"], p["transposed"],
                                          p["output_padding"], p["groups"], p["mask"], **kw)
    elif fn.startswith("grad.") and fn.endswith("_input"):
        x = np.zeros(p["size"]) if _shape_like(p["size"]) else None
        getattr(cconv.grad, fn[5:])(p["size"], A["w"], auto_gy(case, x, A["w"], p, False), p["stride"],
                                    p["padding"], p["dilation"], p["groups"])
    elif fn.startswith("grad."):
        w = np.zeros(p["size"]) if _shape_like(p["size"]) else None
        getattr(cconv.grad, fn[5:])(A["x"], p["size"], auto_gy(case, A["x"], w, p, False), p["stride"],
                                    p["padding"], p["dilation"], p["groups"])
    elif fn == "select_backend":
        cconv.select_backend(A["x"], A["w"], A.get("b"), p["stride"], p["padding"], p["dilation"],
                             p["transposed"], p["output_padding"], p["groups"])
    for k, b in before.items():
        if not np.array_equal(b, arrays[k], equal_nan=True):
            return {"bad": f"the call wrote to its input {k}"}
    return {"ok": "ok"}


def main():
    # a huge parameter may ask for a huge result: MemoryError, not the host's
    # memory (under AddressSanitizer, whose shadow memory needs terabytes of
    # address space, its allocator_may_return_null does that instead)
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, resource.RLIM_INFINITY))
    np.seterr(all="ignore")
    for line in sys.stdin:
        case = json.loads(line)
        try:
            ans = run(case)
        except (ValueError, TypeError) as e:
            ans = {"ok": "ValueError" if isinstance(e, ValueError) else "TypeError", "why": str(e)[:70]}
        except MemoryError as e:
            ans = {"ok": "MemoryError"} if case.get("huge") else {"bad": f"MemoryError: {e}"}
        except Exception as e:  # anything else is a finding
            ans = {"bad": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
