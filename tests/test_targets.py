"""benches/targets.py: compare.py's runs combined (medians over runs), the
speed targets checked per case, and each miss set against the machine's
roofs (GEMM ceiling, copy bandwidth of the level that holds the arrays)."""

import importlib.util
import os
import subprocess
import sys

import pytest

_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "benches")
TARGETS = os.path.join(_DIR, "targets.py")
COMPARE = os.path.join(_DIR, "compare.py")
RESULTS = os.path.join(_DIR, "results")

COLS = ["set", "case", "T", "backend", "cconv ms", "torch ms", "ort ms", "numpy ms", "cconv GFLOP/s",
        "% ceil", "GB/s", "% copy", "cconv/torch", "cconv/ort", "cconv/numpy", "faults/call",
        "torch faults", "err"]


@pytest.fixture(scope="module")
def tg():
    spec = importlib.util.spec_from_file_location("cconv_bench_targets", TARGETS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(which, case, t, ms, r_torch, r_ort="-", gbs="1.0"):
    cells = {"set": which, "case": case, "T": str(t), "backend": "X", "cconv ms": f"{ms} ({ms})",
             "torch ms": "-", "ort ms": "-", "numpy ms": "-", "cconv GFLOP/s": "-", "% ceil": "-",
             "GB/s": gbs, "% copy": "-", "cconv/torch": r_torch, "cconv/ort": r_ort,
             "cconv/numpy": "-", "faults/call": "0", "torch faults": "0", "err": "1e-7"}
    return "| " + " | ".join(cells[c] for c in COLS) + " |"


def _run(rows, dtype="float32", ceil=100.0, copy=20.0, cache=True):
    out = [f"machine: Test CPU; dtype {dtype}; timing blocks", "",
           "| " + " | ".join(COLS) + " |", "|" + "---|" * len(COLS)]
    out += rows
    out += ["", f"GEMM ceiling, T=1: torch.mm 1536^3 = {ceil / 2} GFLOP/s, cconv 1x1 conv 1536^3 = {ceil} "
            "GFLOP/s (% ceil is against the first)",
            f"copy bandwidth, T=1: numpy copy, 1 core = {copy} GB/s (% copy is against the best)"]
    if cache:
        out.append("cache copy bandwidth, T=1: L2 1024 KiB = 80.0 GB/s, L3 32768 KiB = 60.0 GB/s")
    return "\n".join(out) + "\n"


def test_parse_reads_rows_ceilings_and_levels(tg):
    text = _run([_row("forward", "resnet50_3x3", 1, 2.0, "0.50")]) + _run(
        [_row("forward", "resnet50_3x3", 1, 2.0, "0.70")], dtype="float64", cache=False)
    runs = tg.parse("some header\n" + text)
    assert [r["dtype"] for r in runs] == ["float32", "float64"]
    assert runs[0]["ceil"] == {1: 100.0} and runs[0]["copy"] == {1: 20.0}
    assert runs[0]["cache"] == {1: {"L2": (1 << 20, 80.0), "L3": (32 << 20, 60.0)}}
    assert runs[1]["cache"] == {}
    assert runs[0]["rows"][0]["cconv/torch"] == "0.50"


def test_a_section_heading_names_the_dtype(tg):
    """A results file's second table under one machine line, in a section
    that names float64, is a float64 run of its own."""
    text = _run([_row("forward", "resnet50_3x3", 1, "2.0", "0.50")])
    cols = "| " + " | ".join(COLS) + " |"
    text += "\n## float64, forward (one run)\n\n" + cols + "\n|" + "---|" * len(COLS) + "\n"
    text += _row("forward", "resnet50_3x3", 1, "4.0", "0.30") + "\n"
    runs = tg.parse(text)
    assert [(r["dtype"], len(r["rows"])) for r in runs] == [("float32", 1), ("float64", 1)]


def test_medians_misses_and_roofs(tg):
    from cconv._zoo import CASES, EXTRA
    dense, dw = CASES["resnet50_3x3"], EXTRA["convnext_dw7"]
    # cconv at 80% of a 100 GFLOP/s ceiling
    ms_dense = dense.flops() / 80e9 * 1e3
    ms_dw = dw.flops() / 40e9 * 1e3
    runs = []
    for r_dense, r_dw in (("1.10", "0.50"), ("1.30", "0.40"), ("1.20", "0.60")):
        runs += tg.parse(_run([
            _row("forward", "resnet50_3x3", 1, f"{ms_dense:.6f}", r_dense, "0.90", gbs="10.0"),
            _row("forward", "convnext_dw7", 1, f"{ms_dw:.6f}", r_dw, gbs="10.0"),
            _row("backward", "resnet50_3x3", 1, f"{3 * ms_dense:.6f}", "1.05"),
        ]))
    cases, ceil, roofs = tg.combine(runs)
    e = cases[("float32", "forward", "resnet50_3x3", 1)]
    assert e["torch"] == pytest.approx(1.2) and e["torch_range"] == (1.1, 1.3)
    assert e["pct_ceil"] == pytest.approx(80.0, rel=1e-3)
    m = {(x["case"], x["set"], x["peer"]): x for x in tg.misses(cases)}
    # the dense case misses against torch only (0.90 of ort is within 1.0);
    # the backward set's 1.05 is within 1.1
    assert set(m) == {("resnet50_3x3", "forward", "torch"), ("convnext_dw7", "forward", "torch")}
    x = m[("resnet50_3x3", "forward", "torch")]
    assert x["peer_pct_ceil"] == pytest.approx(96.0, rel=1e-3)       # 80% x 1.2
    assert x["need_pct_ceil"] == pytest.approx(96.0, rel=1e-3)
    assert "96% of the ceiling" in x["verdict"]
    y = m[("convnext_dw7", "forward", "torch")]
    # depthwise: 0.5 of torch against 0.3: needs 40% x 0.5 / 0.3 of the ceiling
    assert y["target"] == 0.3 and y["need_pct_ceil"] == pytest.approx(66.7, rel=1e-2)
    # 10 GB/s over ms_dw: the bytes a call moves pick the roof
    nbytes = 10e9 * ms_dw * 1e-3
    assert y["bytes"] == pytest.approx(nbytes, rel=1e-6)
    want = "L2" if nbytes <= 1 << 20 else ("L3" if nbytes <= 32 << 20 else "DRAM")
    assert y["level"] == want
    assert y["pct_bw"] == pytest.approx(100 * 10.0 / {"L2": 80.0, "L3": 60.0, "DRAM": 20.0}[want])
    heads = {(w, t): (g, n) for w, t, g, n, _ in tg.headline(cases)}
    assert heads[("float32 forward, cconv / torch", 1)][1] == 2
    assert heads[("float32 fwd+bwd, cconv / torch", 1)][0] == pytest.approx(1.05)


def test_nearer_levels_are_no_slower(tg):
    text = _run([_row("forward", "resnet50_3x3", 1, "1.0", "0.5")]).replace(
        "L2 1024 KiB = 80.0 GB/s, L3 32768 KiB = 60.0 GB/s", "L2 1024 KiB = 50.0 GB/s, L3 32768 KiB = 70.0 GB/s")
    _, _, roofs = tg.combine(tg.parse(text))
    lv = roofs[("float32", 1)]
    assert lv["L2"] == (1 << 20, 70.0) and lv["L3"] == (32 << 20, 70.0) and lv["DRAM"] == (None, 20.0)


def test_wide_table(tg):
    runs = tg.parse(_run([_row("forward", "resnet50_3x3", 1, "2.0", "0.50", "0.70"),
                          _row("backward", "resnet50_3x3", 1, "6.0", "0.40")]))
    rows = tg.wide_table(runs).splitlines()
    assert rows[0].startswith("| case | forward method | fwd / torch 1T |")
    assert rows[2].startswith("| resnet50_3x3 | X | 0.50 | 0.70 |") and rows[2].endswith("| 0.40 |")


def test_verdicts(tg):
    assert "beyond it" in tg.verdict(60.0, 10.0, "L3", 0.6, 0.3)          # 120% of the ceiling
    assert "L3 copy bandwidth" in tg.verdict(20.0, 60.0, "L3", 0.6, 0.3)  # 120% of L3's copy
    assert tg.verdict(20.0, 10.0, "DRAM", 0.9, 0.3).startswith("within both roofs")  # 60%, 30%
    assert "cconv's 80%" in tg.verdict(80.0, 1.0, "DRAM", 1.1, 1.0)


def test_roof_for(tg):
    levels = {"L2": (2 << 20, 90.0), "L3": (32 << 20, 70.0), "DRAM": (None, 20.0)}
    assert tg.roof_for(levels, 1 << 20) == ("L2", 90.0)
    assert tg.roof_for(levels, 8 << 20) == ("L3", 70.0)
    assert tg.roof_for(levels, 64 << 20) == ("DRAM", 20.0)
    assert tg.roof_for({"DRAM": (None, 20.0)}, 1024) == ("DRAM", 20.0)
    assert tg.roof_for({}, 1024) == (None, None)


def test_float64_dense_3x3_target(tg):
    from cconv._zoo import CASES
    ms = CASES["resnet50_3x3"].flops() / 20e9 * 1e3
    runs = tg.parse(_run([_row("forward", "resnet50_3x3", 1, f"{ms:.6f}", "1.40")], dtype="float64"))
    cases, _, _ = tg.combine(runs)
    (x,) = tg.misses(cases)
    assert x["kind"] == "float64 dense 3x3" and x["target"] == 1.0


@pytest.mark.parametrize("name", ["compare-2026-12-06-intel-xeon-avx512.md", "compare-2026-12-03-amd-epyc-avx2.md",
                                  "compare-2026-12-07-amd-epyc-zen4-avx512.md",
                                  "compare-2026-12-07-amd-epyc-zen4-avx2.md"])
def test_reads_the_recorded_results(tg, name):
    """Results files hold compare.py's outputs (with and without the ONNX
    Runtime column): every case of them is read."""
    with open(os.path.join(RESULTS, name)) as f:
        runs = tg.parse(f.read())
    assert runs and all(r["rows"] and r["ceil"] for r in runs)
    cases, _, _ = tg.combine(runs)
    assert len({k[2] for k in cases}) >= 10
    assert tg.report(runs, True).count("\n") > 20


def test_main_errors(tmp_path):
    empty = tmp_path / "empty.md"
    empty.write_text("no table here\n")
    r = subprocess.run([sys.executable, TARGETS, str(empty)], capture_output=True, text=True)
    assert r.returncode == 2 and "no compare.py table" in r.stderr
    r = subprocess.run([sys.executable, TARGETS, str(tmp_path / "missing.md")], capture_output=True, text=True)
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_compare_output_feeds_targets(tmp_path):
    """compare.py's own output, one small layer: targets.py reads its rows,
    its GEMM ceiling and its copy bandwidths."""
    out = tmp_path / "run.md"
    r = subprocess.run([sys.executable, COMPARE, "--cases", "mbv2_dw_s2_b1", "--threads", "1", "--repeat", "2",
                        "--warmup", "1", "--no-numpy", "--no-ort", "--markdown", "--out", str(out)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    r = subprocess.run([sys.executable, TARGETS, "--cases", str(out)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "float32 T=1: GEMM ceiling" in r.stdout and "DRAM" in r.stdout
    assert "| float32 | forward | mbv2_dw_s2_b1 | 1 |" in r.stdout
