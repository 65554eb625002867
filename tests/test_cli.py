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


# ------------------------------------------------------------ the command line
def test_bare_cconv_prints_help(tmp_path):
    r = _run([sys.executable, "-m", "cconv"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "usage: cconv" in r.stdout and "bench" in r.stdout and "info" in r.stdout
    assert "GFLOP" not in r.stdout          # no benchmark ran


def test_mistyped_subcommand_is_an_invalid_choice(tmp_path):
    r = _run([sys.executable, "-m", "cconv", "bnech"], tmp_path)
    assert r.returncode == 2
    assert "invalid choice: 'bnech'" in r.stderr


def test_bench_own_layers_json(tmp_path):
    import json

    r = _run([sys.executable, "-m", "cconv", "bench", "--repeat", "3", "--json",
              "--layer", "2x8x12x12 16 k3 p1", "--layer", "1x6x20 6 k5 psame g6 name=dw1d",
              "--layer", "1x4x5x5 -> 2 k2 s2 t"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)               # stdout is the JSON document alone
    assert [l["name"] for l in doc["layers"]][1] == "dw1d"
    assert [l["function"] for l in doc["layers"]] == ["conv2d", "conv1d", "conv_transpose2d"]
    for l in doc["layers"]:
        s = l["cconv"]
        assert s["ok"] and s["repeat"] == 3 and 0 < s["min_ms"] <= s["median_ms"]
        assert s["iqr_ms"] >= 0 and s["gflops"] > 0
    m = doc["machine"]
    assert m["isa"] and m["cpu"] and m["threads"] == 1 and "openblas" in m["blas"]
    assert "CPU:" in r.stderr and "ISA:" in r.stderr      # the table went to stderr


def test_bench_layers_file_and_csv(tmp_path):
    import csv
    import io
    import json

    (tmp_path / "layers.json").write_text(json.dumps({"layers": [
        {"spec": "1x4x10x10 8 k3", "name": "a"},
        {"name": "b", "batch": 1, "c_in": 4, "c_out": 4, "size": [9], "kernel": [3],
         "padding": 1, "groups": 2}]}))
    r = _run([sys.executable, "-m", "cconv", "bench", "--repeat", "2", "--csv",
              "--layers-file", "layers.json"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["layer"], x["impl"]) for x in rows] == [("a", "cconv"), ("b", "cconv")]
    assert float(rows[0]["median_ms"]) > 0 and float(rows[1]["rel_err"]) < 1e-4


@pytest.mark.parametrize("args,words", [
    (["--layer", "8x64x56 128"], "at least"),
    (["--layer", "8x64x56x56 128 k3 q1"], "unknown field"),
    (["--layer", "8x64x56x56 128 p1"], "no kernel"),
    (["--layer", "8x64x56x56 128 k3x3x3"], "3 values"),
    (["--compare", "tensorflow"], "unknown peer"),
    (["--layers-file", "missing.json"], "missing.json"),
])
def test_bench_bad_arguments(tmp_path, args, words):
    r = _run([sys.executable, "-m", "cconv", "bench", "--quick"] + args, tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stdout + r.stderr


def test_bench_rows_are_flushed_as_they_finish(tmp_path):
    """Piped output arrives row by row, not all at the end."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.Popen([sys.executable, "-m", "cconv", "bench", "--repeat", "8",
                          "--layer", "1x2x8x8 2 k3 name=tiny",
                          "--layer", "1x256x96x96 256 k3 p1 name=big"],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        for line in p.stdout:
            if line.startswith("tiny"):
                assert p.poll() is None, "the first row came only when the run had ended"
                break
        else:
            raise AssertionError("no row for the first layer")
    finally:
        p.kill()
        p.wait()


def test_bench_compare_and_plot(tmp_path):
    import json

    pytest.importorskip("torch", reason="optional peer")
    pytest.importorskip("matplotlib", reason="optional extra 'plot'")
    r = _run([sys.executable, "-m", "cconv", "bench", "--repeat", "3", "--json",
              "--compare", "torch,onnxruntime", "--plot", "out.png",
              "--layer", "2x8x12x12 16 k3 p1", "--layer", "1x8x10x10 4 k3 s2 t"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    for l in doc["layers"]:
        t = l["torch"]
        assert t["median_ms"] > 0 and t["ratio"] == pytest.approx(
            l["cconv"]["median_ms"] / t["median_ms"])
        o = l["onnxruntime"]
        assert ("skipped" in o) or o["median_ms"] > 0
    png = (tmp_path / "out.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert "out.png" in r.stderr


def test_stats():
    from cconv.cli import _stats

    s = _stats([0.004, 0.001, 0.002, 0.003, 0.005])
    assert s["min_ms"] == pytest.approx(1.0) and s["median_ms"] == pytest.approx(3.0)
    assert s["iqr_ms"] == pytest.approx(2.0) and s["repeat"] == 5


def test_layer_spec_round_trip():
    from cconv._layer import parse_spec

    for layer in _layers():
        again = parse_spec(layer.describe(), layer.name)
        assert again.describe() == layer.describe()
        assert again.output_shape() == layer.output_shape()


CCONV = [sys.executable, "-m", "cconv"]


def test_tune_writes_the_file_a_new_process_loads(tmp_path):
    path = tmp_path / "tuning.json"
    r = _run(CCONV + ["tune", "--layer", "2x16x12x12 16 k3 p1", "--ops", "forward,grad_weight", "--repeat", "1",
              "--file", str(path)], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 problems" in r.stdout and str(path) in r.stdout
    import json

    doc = json.loads(path.read_text())
    assert {e["problem"]["op"] for e in doc["entries"]} == {"forward", "grad_weight"}
    code = ("import numpy as np, cconv; x = np.zeros((2, 16, 12, 12), np.float32); "
            "w = np.zeros((16, 16, 3, 3), np.float32); "
            "print(cconv.select_backend(x, w, padding=1, explain=True).source)")
    env = dict(os.environ, CCONV_TUNE_FILE=str(path), OMP_NUM_THREADS="1")  # (tuned at 1 thread)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert out.stdout.strip() == "tuning", out.stdout + out.stderr


@pytest.mark.parametrize("args, words", [
    (["tune", "--builtin", "nope"], "unknown built-in set"),
    (["tune", "--layer", "2x16x12x12 16 k3", "--ops", "backward", "--dry-run"], "unknown operation"),
    (["tune", "--layer", "nonsense"], "cconv tune"),
    (["tune", "--recorded", "/nonexistent/rec.json"], "cconv tune"),
])
def test_tune_bad_arguments(tmp_path, args, words):
    r = _run(CCONV + args, tmp_path)
    assert r.returncode == 2 and words in r.stderr, r.stdout + r.stderr


def test_tune_dry_run_writes_nothing(tmp_path):
    r = _run(CCONV + ["tune", "--layer", "1x8x9x9 8 k3 p1", "--repeat", "1", "--dry-run", "--file",
              str(tmp_path / "t.json")], tmp_path)
    assert r.returncode == 0 and "written" not in r.stdout, r.stdout + r.stderr
    assert not (tmp_path / "t.json").exists()
