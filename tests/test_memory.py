"""Peak memory of a large convolution: a 1x64x1024x1024 float32
3x3 padding-1 convolution, 64 -> 64 channels, may add at most 64 MiB of peak
RSS beyond its 256 MiB output, whatever the thread count and whether the
input is channels first or channels last.

Each case runs in a fresh subprocess: ``ru_maxrss`` is read once the input
and the weight exist (and after a tiny warm-up convolution has started
OpenBLAS and OpenMP) and again after the convolution.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

LIMIT_MIB = 64
OUTPUT_MIB = 256

_BODY = textwrap.dedent(
    """
    import json, resource, sys
    import numpy as np
    import cconv

    nt, layout = int(sys.argv[1]), sys.argv[2]
    cconv.set_num_threads(nt)
    rng = np.random.default_rng(0)
    # warm-up: threads, OpenBLAS buffers, the kernels' first-call state
    xs = rng.standard_normal((1, 64, 64, 64), dtype=np.float32)
    ws = rng.standard_normal((64, 64, 3, 3), dtype=np.float32)
    if layout == "channels_last":
        xs = np.ascontiguousarray(xs.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    cconv.conv2d(xs, ws, padding=1)
    del xs
    cconv.empty_cache()

    if layout == "channels_last":
        x = rng.standard_normal((1, 1024, 1024, 64), dtype=np.float32).transpose(0, 3, 1, 2)
    else:
        x = rng.standard_normal((1, 64, 1024, 1024), dtype=np.float32)
    w = (rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05).astype(np.float32)
    b = rng.standard_normal(64, dtype=np.float32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    y = cconv.conv2d(x, w, b, padding=1)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # a spot check of the values: one output pixel from its definition
    i, j = 517, 3
    patch = np.zeros((64, 3, 3), np.float64)
    patch[:, :, :] = x[0, :, i - 1:i + 2, j - 1:j + 2]
    ref = np.einsum("ckl,ockl->o", patch, w.astype(np.float64)) + b
    err = float(np.abs(y[0, :, i, j] - ref).max() / np.abs(ref).max())
    print(json.dumps({"before_kib": before, "after_kib": after, "err": err,
                      "shape": list(y.shape), "out_nbytes": int(y.nbytes),
                      "strides": list(y.strides)}))
    """
)


def _run(nt: int, layout: str, cwd) -> dict:
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    # cwd away from the checkout: `python -c` puts the cwd first on sys.path,
    # and the source tree's cconv/ (no compiled extensions) must not shadow
    # the installed package
    r = subprocess.run([sys.executable, "-c", _BODY, str(nt), layout], capture_output=True,
                       text=True, env=env, timeout=600, cwd=cwd)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("layout", ["channels_first", "channels_last"])
@pytest.mark.parametrize("nt", [1, 2])
def test_large_conv_peak_memory(nt, layout, tmp_path):
    res = _run(nt, layout, tmp_path)
    assert res["shape"] == [1, 64, 1024, 1024]
    assert res["out_nbytes"] == OUTPUT_MIB << 20
    assert res["err"] < 1e-4
    if layout == "channels_last":
        assert res["strides"] == [4 * 64 << 20, 4, 4 * 64 * 1024, 4 * 64]
    added_mib = (res["after_kib"] - res["before_kib"]) / 1024 - OUTPUT_MIB
    print(f"{layout} nt={nt}: +{added_mib:.1f} MiB beyond the output")
    assert added_mib <= LIMIT_MIB, (
        f"{layout}, {nt} thread(s): the convolution added {added_mib:.1f} MiB of peak RSS beyond "
        f"its {OUTPUT_MIB} MiB output (limit {LIMIT_MIB} MiB); before {res['before_kib']} KiB, "
        f"after {res['after_kib']} KiB"
    )
