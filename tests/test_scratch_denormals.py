"""No kernel computes on scratch memory it did not write.

Lanes that a kernel computes and then drops (the columns past an output
row, a vector's tail) do not change a result, but their time does: where
such a lane reads scratch left by other data, the bytes can be denormal
numbers (an int64 array's, read as float32), and on x86 every instruction
that reads a denormal takes a microcode assist: the implicit GEMM's
direct mode once ran ResNeXt's grouped stride-2 layer 8x slower, and
MobileNet's stem 4x, whenever the workspace held such bytes.

Each check runs a call once, fills the thread's workspace and the freed
result blocks (the memory the next call's scratch and results come from)
with denormals, clears the CPU's denormal-operand flag (MXCSR's DE bit),
runs the call again and asserts that the flag stayed clear, on the calling
thread and on the kernels' OpenMP threads, and that the results are the
first call's, bit for bit, at one thread and at two.  Every CPU backend
is forced in turn, forward and convolution_backward, on named layers and
on random shapes and parameters.  x86 only: other CPUs keep no such flag.
"""

from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import Backend, _config, _kernels

pytestmark = pytest.mark.skipif(
    _kernels.denormal_operand_seen() is None, reason="this CPU keeps no denormal-operand flag"
)

CPU_BACKENDS = [b for b in Backend if b is not Backend.EMPTY and not b.value.startswith("cuda")]


def _poison(arrays) -> None:
    """The workspace and the given (soon freed) results filled with the bit
    pattern 1 per 32-bit word: a denormal as float32 and as float64."""
    buf = getattr(_config._tls, "buf", None)
    if buf is not None:
        buf[: buf.nbytes // 4 * 4].view(np.uint32)[:] = 1
    for a in arrays:
        if a is not None and a.flags.c_contiguous and a.dtype.kind == "f":
            a.reshape(-1).view(np.uint32)[:] = 1


def _results(r) -> tuple:
    return r if isinstance(r, tuple) else (r,)


def _denormals_read(f, nthreads: int) -> tuple[bool, bool]:
    """(whether the second call read a denormal on any of the nthreads
    threads, whether its results equal the first call's bit for bit)."""
    first = _results(f())
    kept = [None if a is None else a.copy() for a in first]
    _poison(first)
    del first
    _kernels.denormal_operand_seen(True, nthreads)
    second = _results(f())
    seen = bool(_kernels.denormal_operand_seen(True, nthreads))
    same = len(kept) == len(second) and all(
        (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
        for a, b in zip(kept, second)
    )
    return seen, same


def _calls(x, w, b, stride, padding, dilation, transposed, output_padding, groups, backend, gy):
    def fwd():
        return cconv.convolution(x, w, b, stride, padding, dilation, transposed, output_padding,
                                 groups, backend=backend)

    def bwd():
        return cconv.convolution_backward(gy, x, w, [b.shape[0]], stride, padding, dilation,
                                          transposed, output_padding, groups, (True, True, True),
                                          backend=backend)

    return {"forward": fwd, "backward": bwd}


def _check_problem(x, w, b, stride, padding, dilation, transposed, output_padding, groups, seed,
                   nthreads):
    """Every CPU backend that takes the problem, forward and backward, on
    nthreads threads: the failures as strings (empty: none)."""
    cconv.set_num_threads(nthreads)
    rng = np.random.default_rng(seed)
    # the output gradient, once for every backend (its shape: the forward's)
    y = cconv.convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    gy = rng.standard_normal(y.shape).astype(x.dtype)
    bad, ran = [], 0
    for be in CPU_BACKENDS:
        for op, f in _calls(x, w, b, stride, padding, dilation, transposed, output_padding,
                            groups, be, gy).items():
            try:
                seen, same = _denormals_read(f, nthreads)
            except (ValueError, NotImplementedError):  # the backend does not take it
                continue
            ran += 1
            if seen or not same:
                bad.append(f"{be.value} {op}: denormal read {seen}, same results {same}")
    return bad, ran


# (x shape, w shape, stride, padding, dilation, groups): layers whose direct
# mode reads unwritten places of its band (a stride-2 band's last column of
# a phase, a row phase's last row), and others beside them
NAMED = [
    ((1, 64, 28, 28), (64, 8, 3, 3), 2, 1, 1, 8),            # ResNeXt grouped, stride 2
    ((2, 128, 56, 56), (128, 8, 3, 3), 2, 1, 1, 16),         # the same, large enough for 2 threads
    ((2, 3, 64, 64), (16, 3, 3, 3), 2, 1, 1, 1),             # MobileNet-like stem
    ((1, 3, 48, 48), (24, 3, 7, 7), 2, 3, 1, 1),             # 7x7 stride-2 stem
    ((2, 3, 96, 96), (24, 3, 7, 7), 2, 3, 1, 1),             # the same, for 2 threads
    ((2, 3, 32, 32), (32, 3, 4, 4), 4, 0, 1, 1),             # 4x4 stride-4 patches
    ((1, 16, 26, 9), (16, 4, 5, 3), (2, 1), (2, 3), (1, 3), 4),  # row stride only
    ((2, 4, 61), (8, 4, 5), 3, 2, 1, 1),                     # 1-D stride 3
    ((1, 2, 9, 11, 13), (4, 2, 3, 3, 3), (1, 2, 2), 1, 1, 1),  # 3-D, stride (1, 2, 2)
    ((1, 24, 14, 14), (48, 24, 3, 3), 1, 1, 1, 1),           # dense, stride 1
]


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(NAMED)))
def test_named_layers_read_no_denormal_scratch(case, dtype, nthreads, restore_threads):
    xs, ws, stride, padding, dilation, groups = NAMED[case]
    rng = np.random.default_rng(case)
    d = len(xs) - 2
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    bad, ran = _check_problem(x, w, b, stride, padding, dilation, False, [0] * d, groups, case,
                              nthreads)
    assert ran >= 2, "no backend took the layer"
    assert not bad, "\n".join(bad)


def _random_problem(rng, dtype):
    d = int(rng.integers(1, 4))
    transposed = bool(rng.random() < 0.25)
    g = int(rng.choice([1, 1, 2, 4]))
    cin, cout = int(rng.integers(1, 7)) * g, int(rng.integers(1, 7)) * g
    if rng.random() < 0.2:  # depthwise, channel multiplier 1 or 2
        g = cin = int(rng.integers(1, 13))
        cout = cin * int(rng.choice([1, 2]))
    k = [int(rng.choice([1, 2, 3, 3, 5, 7])) for _ in range(d)]
    s = [int(rng.choice([1, 1, 2, 3, 4])) for _ in range(d)]
    dl = [int(rng.choice([1, 1, 1, 2, 3])) for _ in range(d)]
    p = [int(rng.integers(0, k[i] // 2 + 1)) * dl[i] for i in range(d)]
    op = [0] * d
    if transposed:
        op = [int(rng.integers(0, max(s[i], dl[i]))) for i in range(d)]
        p = [min(p[i], (k[i] - 1) * dl[i]) for i in range(d)]
    top = 30 if d < 3 else 10
    sp = [max(1, (k[i] - 1) * dl[i] + 1 - 2 * p[i]) + int(rng.integers(0, top)) for i in range(d)]
    n = int(rng.integers(1, 3))
    x = rng.standard_normal([n, cin] + sp).astype(dtype)
    wshape = ([cin, cout // g] if transposed else [cout, cin // g]) + k
    w = rng.standard_normal(wshape).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    return x, w, b, s, p, dl, transposed, op, g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(6))
def test_random_problems_read_no_denormal_scratch(seed, dtype, restore_threads):
    rng = np.random.default_rng(1000 + seed)
    bad, ran = [], 0
    for i in range(4):
        prob = _random_problem(rng, dtype)
        b, r = _check_problem(*prob, seed * 10 + i, 1 + i % 2)
        ran += r
        x, w = prob[0], prob[1]
        bad += [f"x {x.shape} w {w.shape} s {prob[3]} p {prob[4]} d {prob[5]} transposed "
                f"{prob[6]} op {prob[7]} groups {prob[8]}: {m}" for m in b]
    assert ran >= 8
    assert not bad, "\n".join(bad)


def test_the_flag_sees_a_denormal_operand(restore_threads):
    """The check itself: the flag is set by arithmetic on a denormal, stays
    clear on normal numbers, and reading it with clear=True clears it; the
    team's flag sees a denormal that a kernel's worker thread read."""
    a = np.full(64, 1e-40, np.float32)  # denormal float32
    _kernels.denormal_operand_seen(True)
    _ = a * np.float32(3)
    assert _kernels.denormal_operand_seen(True) is True
    assert _kernels.denormal_operand_seen(True) is False
    c = np.full(64, 1.5, np.float32)
    _ = c * np.float32(3)
    assert _kernels.denormal_operand_seen(True) is False
    cconv.set_num_threads(2)
    x = np.full((2, 32, 48, 48), 1e-40, np.float32)  # every thread reads denormals
    wd = np.ones((32, 1, 3, 3), np.float32)
    _kernels.denormal_operand_seen(True, 2)
    cconv.conv2d(x, wd, groups=32)
    assert _kernels.denormal_operand_seen(True, 2) is True
    cconv.conv2d(np.ones_like(x), wd, groups=32)
    assert _kernels.denormal_operand_seen(True, 2) is False
    with pytest.raises(TypeError):
        _kernels.denormal_operand_seen(True, "2")  # a thread count, not a string
