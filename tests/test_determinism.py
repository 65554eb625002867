"""Results do not depend on the thread count: every forward, gradient and
double-backward result is bit-identical at 1, 2 and 3 threads, for every
backend (src/core/parallel.h: the work splits depend on the problem and the CPU
count, never on set_num_threads).

Two runs: problems large enough to be split at the measured grains, in this
process; and many small random problems in a child process with
CCONV_GRAIN_SCALE=0, where every call is split and threaded as a large one.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cconv
from cconv import Backend

from reference import ref_conv, ref_conv_transpose

# the default choice and every CPU method, forced (those that cannot run a
# problem are left out of it)
BACKENDS = [None] + [b for b in Backend if not b.value.startswith("cuda") and b is not Backend.EMPTY]


def random_problem(rng, big: bool = False) -> dict:
    """Arguments of a random convolution: 1-3 spatial dims, plain or
    transposed, grouped or depthwise, strided, padded, dilated, float32 or
    float64 (sometimes complex64 or float16), sometimes a non-contiguous or
    channels-last input."""
    nsp = int(rng.integers(1, 4))
    transposed = bool(rng.random() < 0.35)
    if rng.random() < 0.25:
        cin = int(rng.integers(2, 24))
        groups, cout = cin, cin * int(rng.integers(1, 3))
    else:
        groups = int(rng.choice([1, 1, 1, 2, 3]))
        cin, cout = groups * int(rng.integers(1, 20)), groups * int(rng.integers(1, 40))
    if big:
        cin, cout = cin * 2, cout * 2
        groups = groups * 2 if groups == cin // 2 else groups
    top = {1: 300 if big else 70, 2: 48 if big else 30, 3: 14 if big else 10}[nsp]
    sp = tuple(int(rng.integers(max(1, top // 3) if big else 1, top)) for _ in range(nsp))
    k = tuple(int(rng.integers(1, 6 if nsp < 3 else 4)) for _ in range(nsp))
    st = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    dl = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    pd = tuple(int(rng.integers(0, 3)) for _ in range(nsp))
    u = rng.random()
    if u < 0.25:
        k, st, pd, dl = (1,) * nsp, (1,) * nsp, (0,) * nsp, (1,) * nsp
    elif u < 0.45:
        k, st, pd, dl = (3,) * nsp, (1,) * nsp, (1,) * nsp, (1,) * nsp
    batch = int(rng.integers(1, 5))
    dt = [np.float32, np.float64, np.complex64, np.float16][int(rng.choice(4, p=[0.45, 0.4, 0.1, 0.05]))]
    if transposed:
        wshape = (cin, cout // groups) + k
        op = tuple(int(rng.integers(0, max(s, d))) for s, d in zip(st, dl))
    else:
        wshape = (cout, cin // groups) + k
        op = (0,) * nsp

    def arr(shape):
        a = rng.standard_normal(shape)
        if np.dtype(dt).kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        return a.astype(dt)

    x = arr((batch, cin) + sp)
    if rng.random() < 0.2:  # a non-contiguous input
        x = arr((batch, cin) + tuple(2 * s for s in sp))[(slice(None), slice(None)) + (slice(None, None, 2),) * nsp]
    elif rng.random() < 0.2:  # channels last
        x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
    return dict(x=x, w=arr(wshape), b=arr((cout,)) if rng.random() < 0.5 else None, stride=st,
                padding=pd, dilation=dl, transposed=transposed, output_padding=op, groups=groups)


def results(pr: dict, backend) -> list | None:
    """Forward, the three gradients and the double backward's outputs of
    problem ``pr`` on ``backend`` (None where the backend cannot run it)."""
    args = (pr["stride"], pr["padding"], pr["dilation"], pr["transposed"], pr["output_padding"],
            pr["groups"])
    try:
        y = cconv.convolution(pr["x"], pr["w"], pr["b"], *args, backend=backend)
    except ValueError:
        return None
    rng = np.random.default_rng(1)
    gy = rng.standard_normal(y.shape).astype(y.dtype)
    nb = y.shape[1]
    out = [y]
    try:
        out += list(cconv.convolution_backward(gy, pr["x"], pr["w"], [nb] if pr["b"] is not None else None,
                                               *args, [True, True, pr["b"] is not None], backend=backend))
        ggi = rng.standard_normal(pr["x"].shape).astype(y.dtype)
        ggw = rng.standard_normal(pr["w"].shape).astype(y.dtype)
        out += list(cconv.convolution_double_backward(ggi, ggw, None, gy, pr["w"], pr["x"], *args,
                                                      [True, True, False], backend=backend))
    except ValueError:  # a forced backend without a backward
        pass
    return out


def compare(problems, threads=(1, 2, 3)):
    """(results compared, differing) over every problem and backend."""
    compared, bad = 0, []
    before = cconv.get_num_threads()
    try:
        for i, pr in enumerate(problems):
            for be in BACKENDS:
                res = {}
                for nt in threads:
                    cconv.set_num_threads(nt)
                    res[nt] = results(pr, be)
                if res[threads[0]] is None:
                    continue
                for j, a in enumerate(res[threads[0]]):
                    if a is None:
                        continue
                    compared += 1
                    if not all(np.array_equal(a, res[nt][j], equal_nan=True) for nt in threads[1:]):
                        bad.append((i, str(be), j))
    finally:
        cconv.set_num_threads(before)
    return compared, bad


def test_split_problems_are_bit_identical_at_1_2_3_threads():
    rng = np.random.default_rng(20261203)
    problems = [random_problem(rng, big=True) for _ in range(14)]
    compared, bad = compare(problems)
    assert compared >= 60, compared
    assert bad == [], bad


def test_results_stay_right_on_many_threads():
    # the split changed for the bits' sake must still compute the right
    # values (a forward and a transposed one against the float64 reference)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 24, 40, 40)).astype(np.float32)
    w = rng.standard_normal((48, 12, 3, 3)).astype(np.float32)
    before = cconv.get_num_threads()
    try:
        for nt in (1, 3):
            cconv.set_num_threads(nt)
            y = cconv.conv2d(x, w, stride=(1, 2), padding=1, groups=2)
            ref = ref_conv(x, w, None, stride=(1, 2), pad_before=1, groups=2)
            assert np.linalg.norm(y - ref) <= 1e-5 * np.linalg.norm(ref)
            yt = cconv.conv_transpose2d(x, w[:24], stride=2, padding=1, groups=2)
            ref = ref_conv_transpose(x, w[:24], None, stride=2, padding=1, groups=2)
            assert np.linalg.norm(yt - ref) <= 1e-5 * np.linalg.norm(ref)
    finally:
        cconv.set_num_threads(before)


_CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    import numpy as np
    import test_determinism as t
    rng = np.random.default_rng(int(sys.argv[1]))
    compared, bad = t.compare([t.random_problem(rng) for _ in range(int(sys.argv[2]))])
    print("compared", compared, "differing", len(bad), bad[:10])
    sys.exit(1 if bad or compared < 100 else 0)
""")


@pytest.mark.parametrize("seed", [1, 2])
def test_every_split_is_bit_identical_at_1_2_3_threads(seed, tmp_path):
    # grain scale 0: every call split and threaded, whatever its size
    env = dict(os.environ, CCONV_GRAIN_SCALE="0")
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", _CHILD.format(here=here), str(seed), "40"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
