"""benches/winograd_error.py, benches/mca_kernels.py and
benches/method_table.py: the transforms the error study evaluates are
Winograd's (exact in float64), its float32 figures order the tile sizes as
measured, the llvm-mca driver cuts the right loop out of a kernel's
assembly, and the method table writes a valid table of defaults."""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

_BENCHES = os.path.join(os.path.dirname(__file__), os.pardir, "benches")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"cconv_bench_{name}",
                                                  os.path.join(_BENCHES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def werr():
    return _load("winograd_error")


@pytest.fixture(scope="module")
def mca():
    return _load("mca_kernels")


@pytest.mark.parametrize("m", [2, 4])
def test_transforms_are_exact_in_float64(werr, m):
    """Y = A^T [(G g G^T) * (B^T d B)] A is the direct correlation."""
    rng = np.random.default_rng(0)
    d = rng.standard_normal((3, 5, m + 2, m + 2))
    g = rng.standard_normal((4, 5, 3, 3))
    G, BT, AT = werr.F[m]
    U = np.einsum("ij,kcjl,ml->kcim", G, g, G)
    V = np.einsum("ij,tcjl,ml->tcim", BT, d, BT)
    Y = np.einsum("ij,tkjl,ml->tkim", AT, np.einsum("kcim,tcim->tkim", U, V), AT)
    np.testing.assert_allclose(Y, werr.direct(d, g, m), rtol=1e-10, atol=1e-10)


def test_float32_error_orders_the_tile_sizes(werr):
    rng = np.random.default_rng(1)
    d = rng.standard_normal((64, 64, 6, 6)).astype(np.float32)
    g = rng.standard_normal((8, 64, 3, 3)).astype(np.float32)
    ref = werr.direct(d, g, 4)
    y4 = werr.winograd(d, g, 4)
    y2 = np.concatenate([np.concatenate([werr.winograd(d[:, :, i:i + 4, j:j + 4], g, 2)
                                         for j in (0, 2)], axis=3) for i in (0, 2)], axis=2)
    s = np.abs(ref).max()
    e2, e4 = np.abs(y2 - ref).max() / s, np.abs(y4 - ref).max() / s
    assert e2 < 1.5e-6 and e4 > 3 * e2


ASM = """\
cc_ig_ukr_f32_avx2:
\tpushq %rbp
.L3:
\tvfmadd231ps %ymm1, %ymm2, %ymm3
\taddq $4, %rax
\tjne .L3
.L5:
\tvfmadd231ps %ymm1, %ymm2, %ymm3
\tvfmadd231ps %ymm1, %ymm2, %ymm4
\t.p2align 4
\tcmpq %rax, %rcx
\tjb .L5
\tjmp .L9
\tret
\t.size cc_ig_ukr_f32_avx2, .-cc_ig_ukr_f32_avx2
"""


def test_loop_extraction(mca):
    body = mca.function_body(ASM.splitlines(), "cc_ig_ukr_f32_avx2")
    loop = mca.hottest_loop(body)
    assert [ln.split()[0] for ln in loop] == ["vfmadd231ps", "vfmadd231ps", "cmpq", "jb"]


@pytest.mark.skipif(shutil.which("llvm-mca") is None or shutil.which("gcc") is None,
                    reason="needs gcc and llvm-mca")
def test_a_kernel_under_llvm_mca(mca, tmp_path):
    s = str(tmp_path / "k.s")
    mca.compile_asm("avx2", False, s)
    loop = mca.hottest_loop(mca.function_body(open(s).read().splitlines(), "cc_ig_ukr_f32_avx2"))
    assert sum("vfmadd" in ln for ln in loop) >= 12
    assert mca.mca(shutil.which("llvm-mca"), "haswell", loop) > 0


METHOD_TABLE = os.path.join(_BENCHES, "method_table.py")


def _method_table(args, tmp_path, **env):
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, METHOD_TABLE] + args, capture_output=True, text=True,
                          env=e, cwd=tmp_path, timeout=600)


def test_method_table_writes_a_kind_table(tmp_path):
    """One small layer, every method timed, the table written for this
    CPU's kind; an entry (where one is kept) names a method faster than the
    rules' choice by the margin in both measurements."""
    from cconv import _kind

    out, table = tmp_path / "rows.md", tmp_path / "kind.json"
    r = _method_table(["--extra", "--cases", "mbv2_dw_s2_b1,dw_tconv_k4", "--threads", "1", "--ops",
                       "forward,grad_weight", "--repeat", "2", "--verify", "2", "--margin", "1.02",
                       "--markdown", "--out", str(out), "--kind-table", str(table)],
                      tmp_path, CCONV_KIND_DEFAULTS="0")
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in out.read_text().splitlines() if ln.startswith("| ") and "| op |" not in ln]
    assert len(rows) == 4 and all(ln.count("|") == 10 for ln in rows), rows
    doc = json.loads(table.read_text())
    assert doc["kind"] == _kind.cpu_kind() and doc["margin"] == 1.02
    for e in doc["entries"]:
        assert e["threads"] == 1 and e["method"] != e["default"]
        assert e["ms"][e["default"]] / e["ms"][e["method"]] >= 1.02 and e["again"] >= 1.02
    assert _kind.read_table(str(table), _kind.cpu_kind()) is not None


@pytest.mark.parametrize("args,env,match", [
    (["--verify", "-1"], {"CCONV_KIND_DEFAULTS": "0"}, "--verify"),
    (["--repeat", "0"], {"CCONV_KIND_DEFAULTS": "0"}, "--repeat"),
    (["--kind-table"], {"CCONV_KIND_DEFAULTS": "1"}, "CCONV_KIND_DEFAULTS=0"),
    (["--ops", "backward"], {"CCONV_KIND_DEFAULTS": "0"}, "--ops"),
    (["--cases", "no_such_layer"], {"CCONV_KIND_DEFAULTS": "0"}, "no_such_layer"),
])
def test_method_table_argument_errors(tmp_path, args, env, match):
    r = _method_table(args, tmp_path, **env)
    assert r.returncode == 2 and match in r.stderr, r.stderr


# ---- benches/core_distance.c: how far apart two CPUs are --------------------

def test_core_distance(tmp_path):
    """Built with the system's C compiler, it reports a positive one-way time
    for two CPUs (where the process has two), and refuses a CPU the process
    may not run on."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = tmp_path / "core_distance"
    src = pathlib.Path(__file__).resolve().parent.parent / "benches" / "core_distance.c"
    subprocess.run([cc, "-O2", "-pthread", str(src), "-o", str(exe)], check=True)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:  # (one CPU: the two threads would take turns by time slice)
        r = subprocess.run([str(exe), str(cpus[0]), str(cpus[1]), "20000"], capture_output=True,
                           text=True, timeout=120, check=True)
        ns = float(r.stdout.split(":")[1].split()[0])
        assert 0 < ns < 1e6, r.stdout
    r = subprocess.run([str(exe), "100000", str(cpus[0]), "10"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "cpu" in r.stderr, (r.returncode, r.stderr)
