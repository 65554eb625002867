"""A bounded fuzz of the public API: hypothesis draws calls of every entry
point with random shapes, dtypes, layouts, values and parameters (good and
absurd); a child process (tests/fuzz_worker.py) runs them.  A case fails on
a crash or a hang of the child, on an exception other than ValueError or
TypeError (MemoryError only where a parameter is huge) and on an input the
call wrote to.

CCONV_FUZZ_EXAMPLES sets the number of cases (default 300; .ci/run's fuzz
stage runs more), CCONV_FUZZ_SECONDS a time budget after which the test
stops drawing."""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("CCONV_FUZZ_EXAMPLES", "300"))
SECONDS = float(os.environ.get("CCONV_FUZZ_SECONDS", "600"))
CASE_TIMEOUT = 60.0  # seconds for one case, load included
HERE = os.path.dirname(os.path.abspath(__file__))

FNS = (["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "convolution", "convolution_backward", "convolution_double_backward", "select_backend"]
       + [f"grad.conv{n}d_{w}" for n in (1, 2, 3) for w in ("input", "weight")])
DTYPES = ["float32", "float64", "float16", "complex64", "complex128"]
BACKENDS = ["gemm", "gemm_transpose", "depthwise", "winograd_depthwise_3x3", "empty", "cuda_gemm", "nope"]
HUGE = 1 << 16


class Worker:
    """The child process and the one-line-per-case protocol with it."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.proc = None

    def start(self):
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fuzz_worker.py")], cwd=self.tmp,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)

    def ask(self, case):
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ready = sel.select(CASE_TIMEOUT)
        sel.close()
        if not ready:
            self.stop()
            return {"bad": f"hang: no answer in {CASE_TIMEOUT:.0f} s"}
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            err = self.proc.stderr.read()[-2000:]
            self.proc = None
            return {"bad": f"crash: the child ended with {rc}\n{err}"}
        return json.loads(line)

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


# --------------------------------------------------------------------------
# cases: hypothesis draws the entry point, a seed and how odd the call may
# be (0: valid arguments, 1: one odd parameter, 2: odd arrays too, 3: any);
# the seed's random stream builds the call, so about half the cases reach
# the kernels and the rest the checks
# --------------------------------------------------------------------------
ODD = [0, -1, -3, HUGE, 2**31, 2**62, 2**63, 2**64, True, 1.5, "2", None, [], "same", "valid", "full"]


def _param(r, nsp, lo, hi, odd):
    if odd and r.random() < 0.3:
        return r.choice([r.choice(ODD), [r.randint(lo, hi) for _ in range(r.randint(1, 4))],
                         [r.randint(-1, hi) for _ in range(nsp)]])
    return r.choice([r.randint(lo, hi), [r.randint(lo, hi) for _ in range(nsp)],
                     tuple(r.randint(lo, hi) for _ in range(nsp))])


def _array(r, shape, dtype, odd):
    if odd and r.random() < 0.1:
        return {"kind": r.choice(["none", "scalar", "string"])}
    if odd and r.random() < 0.1:
        shape = [r.randint(0, 5) for _ in range(r.randint(0, 6))]
    if odd and r.random() < 0.05:
        dtype = r.choice(["int32", "bool"])
    layout = r.choice(["c"] * 6 + ["f", "strided", "cl", "neg", "be", "readonly", "list", "bcast"])
    return {"kind": "array", "shape": list(shape), "dtype": dtype, "layout": layout,
            "fill": r.choice(["normal"] * 5 + ["special", "zeros"])}


def make_case(fn: str, seed: int, oddness: int) -> dict:
    """A call of ``fn`` (see the note above)."""
    import random

    r = random.Random(seed)
    odd_p, odd_a = oddness in (1, 3), oddness >= 2
    if fn.startswith("grad."):
        nsp = int(fn[len("grad.conv")])
    elif fn[-2].isdigit():
        nsp = int(fn[-2])
    else:
        nsp = r.randint(1, 3)
    transposed = fn.startswith("conv_transpose") or (
        fn in ("convolution", "convolution_backward", "convolution_double_backward", "select_backend")
        and r.random() < 0.5)
    groups = r.choice([1, 1, 2, 3])
    batch = r.choice([0, 1, 1, 2, 3])
    cin = groups * r.randint(0 if r.random() < 0.1 else 1, 4)
    if r.random() < 0.25:
        cin = groups = r.randint(2, 8)  # depthwise
    cpg = r.randint(1, 3)
    sp = [r.randint(0 if r.random() < 0.05 else 1, 9) for _ in range(nsp)]
    k = [r.randint(1, 4) for _ in range(nsp)]
    cout = cpg * groups
    wshape = [cin, cpg] + k if transposed else [cout, cin // groups] + k
    dtype = r.choice(DTYPES)
    xshape = [batch, cin] + sp
    if (fn in ("conv1d", "conv2d", "conv3d") or fn.startswith("conv_t")) and r.random() < 0.15:
        xshape = xshape[1:]  # unbatched
    params = {"stride": _param(r, nsp, 1, 3, odd_p), "padding": _param(r, nsp, 0, 3, odd_p),
              "dilation": _param(r, nsp, 1, 3, odd_p), "output_padding": _param(r, nsp, 0, 2, odd_p),
              "groups": r.choice(ODD) if odd_p and r.random() < 0.1 else groups,
              "transposed": r.choice([1, 0, "yes", None]) if odd_p and r.random() < 0.1 else transposed}
    if not transposed and r.random() < 0.7:
        params["output_padding"] = 0
    arr = {"x": _array(r, xshape, dtype, odd_a), "w": _array(r, wshape, dtype, odd_a)}
    case = {"fn": fn, "params": params, "arrays": arr}
    if r.random() < 0.5:
        arr["b"] = _array(r, [cout], dtype, odd_a)
    if (fn in ("conv1d", "conv2d", "conv3d") or fn.startswith("conv_transpose")) and r.random() < 0.15:
        arr["out"] = _array(r, [batch, cout] + sp, dtype, odd_a)
    if fn in ("convolution_backward", "convolution_double_backward") or fn.startswith("grad."):
        arr["gy"] = _array(r, [batch, cout] + sp, dtype, odd_a)
        case["gy_auto"] = r.random() < 0.85
        params["mask"] = (r.choice([[1, 0, 1], [True], "all", None, (True, False, None)]) if odd_p and
                          r.random() < 0.2 else [r.random() < 0.7 for _ in range(3)])
        params["bias_sizes"] = (r.choice([[cout + 1], [-1], "x", 3]) if odd_p and r.random() < 0.2
                                else r.choice([None, [cout], (cout,)]))
        right = wshape if fn.endswith("_weight") else xshape
        params["size"] = (r.choice([sp, [-1] + xshape[1:], "abc", None]) if odd_p and r.random() < 0.2
                          else right)
    if fn == "convolution_double_backward":
        for name, shape in (("ggI", xshape), ("ggW", wshape), ("ggb", [cout])):
            if r.random() < 0.6:
                arr[name] = _array(r, shape, dtype, odd_a)
    if r.random() < 0.2 and fn != "select_backend" and not fn.startswith("grad."):
        case["backend"] = r.choice(BACKENDS)

    def big(v):
        if isinstance(v, bool) or v is None:
            return False
        if isinstance(v, int):
            return abs(v) >= HUGE
        if isinstance(v, (list, tuple)):
            return any(big(e) for e in v)
        return False

    case["huge"] = any(big(v) for v in params.values())
    return case


cases = st.builds(make_case, st.sampled_from(FNS), st.integers(0, 2**32 - 1), st.integers(0, 3))


# --------------------------------------------------------------------------
# the test
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    w = Worker(str(tmp_path_factory.mktemp("fuzz")))
    yield w
    w.stop()


def test_public_api_fuzz(worker):
    t_end = time.monotonic() + SECONDS
    seen = {"ok": 0, "ValueError": 0, "TypeError": 0, "MemoryError": 0}
    findings = []
    whys = {}

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(cases)
    def one(case):
        if time.monotonic() > t_end:
            return
        ans = worker.ask(case)
        if "bad" in ans:
            findings.append((ans["bad"], case))
            raise AssertionError(f"{ans['bad']}\ncase: {json.dumps(case)}")
        seen[ans["ok"]] += 1
        if "why" in ans:
            whys[ans["why"][:50]] = whys.get(ans["why"][:50], 0) + 1

    one()
    print("fuzz:", seen)
    if os.environ.get("CCONV_FUZZ_VERBOSE"):
        for k, v in sorted(whys.items(), key=lambda kv: -kv[1])[:25]:
            print(f"{v:5d}  {k}")
    assert sum(seen.values()) > 0
    assert findings == []
