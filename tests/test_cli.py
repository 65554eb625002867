"""The console command and ``python -m cconv``, run as a user would."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest


def _run(args, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_python_m_cconv_info(tmp_path):
    r = _run([sys.executable, "-m", "cconv", "info"], tmp_path)
    assert r.returncode == 0, r.stderr
    import cconv

    assert cconv.__version__ in r.stdout
    assert "BLAS" in r.stdout


def test_bench_quick_checks_results(tmp_path):
    r = _run([sys.executable, "-m", "cconv", "bench", "--quick", "--layers", "mobilenetv2_dw,dcgan_tconv"],
             tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.lower()
    assert "mobilenetv2_dw" in out and "dcgan_tconv" in out
    assert "depthwise" in out and "gemm_transpose" in out


def test_console_script_exists_and_runs(tmp_path):
    exe = shutil.which("cconv", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the cconv console script is not installed next to this Python (editable dev install)")
    r = _run([exe, "info"], tmp_path)
    assert r.returncode == 0, r.stderr


def test_bench_rejects_unknown_layer(tmp_path):
    r = _run([sys.executable, "-m", "cconv", "bench", "--quick", "--layers", "no_such_layer"], tmp_path)
    assert r.returncode != 0
    assert "no_such_layer" in (r.stdout + r.stderr)


def _layers():
    from cconv._layer import Layer
    from cconv.cli import LAYERS

    extra = (  # per-dimension tuples and every parameter away from its default
        Layer("tuples2d", 2, 6, 4, (9, 11), (3, 2), stride=(2, 1), padding=(1, 0),
              dilation=(1, 2), groups=2),
        Layer("tconv3d", 1, 4, 6, (3, 4, 5), (2, 3, 2), stride=(2, 1, 3), padding=(0, 1, 1),
              dilation=(1, 1, 2), groups=2, transposed=True, output_padding=(1, 0, 2)),
    )
    return LAYERS + extra


@pytest.mark.parametrize("layer", _layers(), ids=lambda l: l.name)
def test_layer_shapes_match_the_convolution(layer):
    """Layer's own shape arithmetic (shared by `cconv bench` and benches/)
    agrees with the convolution it describes; the small ones are also
    checked against the float64 reference."""
    import cconv
    import reference

    for batch in (1, 2):
        x, w, b, gy = layer.arrays("float64", batch=batch, seed=3)
        assert x.shape == layer.input_shape(batch) and w.shape == layer.weight_shape()
        assert b.shape == (layer.c_out,) and gy.shape == layer.output_shape(batch)
        y = getattr(cconv, layer.func_name)(x, w, b, **layer.kwargs())
        assert y.shape == layer.output_shape(batch)
    if x.size < 5000:
        s, p, d, _, op, g = layer.conv_args()
        if layer.transposed:
            ref = reference.ref_conv_transpose(x, w, b, s, p, op, g, d)
        else:
            ref = reference.ref_conv(x, w, b, s, p, None, d, g)
        reference.assert_close(y, ref, np.float64)
