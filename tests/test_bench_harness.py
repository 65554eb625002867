"""The timing loops of benches/compare.py: each contender gets exactly the
calls asked for, in the order each mode promises (a wrong count or order
would skew every ratio the script prints)."""

import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), os.pardir, "benches", "compare.py")


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("cconv_bench_compare", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _recorder():
    log = []

    def make(name):
        return lambda: log.append(name)
    return log, {"a": make("a"), "b": make("b")}


@pytest.mark.parametrize("repeat, block", [(1, 5), (7, 3), (10, 5), (4, 10)])
def test_blocks_counts_and_order(compare, repeat, block):
    log, cont = _recorder()
    res = compare.run_blocks(cont, repeat, warmup=2, block=block)
    assert sorted(res) == ["a", "b"]
    assert all(len(res[k][0]) == repeat for k in res)
    assert all(t >= 0 for k in res for t in res[k][0])
    # warm-up: each contender `warmup` times, alternating
    assert log[:4] == ["a", "b", "a", "b"]
    runs = []  # the calls after the warm-up, as (name, run length)
    for nm in log[4:]:
        if runs and runs[-1][0] == nm:
            runs[-1][1] += 1
        else:
            runs.append([nm, 1])
    # every run is one untimed call and at most `block` timed ones; a
    # contender's runs add up to `repeat` timed calls
    assert all(2 <= n <= block + 1 for _, n in runs)
    for k in ("a", "b"):
        assert sum(n - 1 for nm, n in runs if nm == k) == repeat
    # the contenders take turns: a, b, a, b, ...
    assert [nm for nm, _ in runs] == ["a", "b"] * (len(runs) // 2)


def test_interleaved_counts_and_rotation(compare):
    log, cont = _recorder()
    res = compare.run_interleaved(cont, 5, warmup=1)
    assert all(len(res[k][0]) == 5 for k in res)
    assert log == ["a", "b"] + ["a", "b", "b", "a", "a", "b", "b", "a", "a", "b"]


def test_timing_option(compare):
    args, _ = compare.parse_args(["--timing", "blocks", "--block", "3", "--repeat", "4"])
    assert (args.timing, args.block, args.repeat) == ("blocks", 3, 4)
    assert compare.parse_args([])[0].timing == "interleaved"
    with pytest.raises(SystemExit):
        compare.parse_args(["--block", "0"])
    with pytest.raises(SystemExit):
        compare.parse_args(["--timing", "sometimes"])


def test_traffic_bytes(compare):
    import numpy as np
    x, w, b = np.zeros((2, 3, 8), np.float32), np.zeros((4, 3, 3), np.float32), np.zeros(4, np.float32)
    y = np.zeros((2, 4, 6), np.float32)
    # forward: each array read or written once
    assert compare.traffic_bytes("forward", x, w, b, y) == 4 * (48 + 36 + 4 + 48)
    # forward + backward: x and w read twice, grad_output the output's size
    got = (y, np.zeros_like(x), np.zeros_like(w), np.zeros_like(b))
    assert compare.traffic_bytes("backward", x, w, b, got) == 4 * (2 * (48 + 36) + 4 + 48 + 48 + 36 + 4 + 48)
    # a gradient not asked for moves nothing
    got = (y, None, np.zeros_like(w), None)
    assert compare.traffic_bytes("backward", x, w, b, got) == 4 * (2 * (48 + 36) + 4 + 48 + 36 + 48)


def test_copy_ceiling(compare):
    res = compare.copy_ceiling(3, mib=4)
    assert "numpy copy, 1 core" in res and all(v > 0 for v in res.values())
