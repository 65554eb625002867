"""Defaults per CPU kind (cconv/_kind.py, cconv/kinds/*.json): the shipped
tables are valid (each entry a method that can run its problem and that was
measured faster than the rules' choice by the table's margin), a table's
winners are what runs and what select_backend explains, the tuning file and
benchmark mode come first, and bad or foreign tables are ignored with a
warning."""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cconv
from cconv import Backend, _dispatch, _kind, _trace, _tuning
from cconv._layer import Layer
from reference import ref_conv, rel_err

HERE = os.path.dirname(os.path.abspath(__file__))
LAYER = Layer("k3x3", 2, 16, 16, (12, 12), (3, 3), padding=1)
TABLES = sorted(glob.glob(os.path.join(os.path.dirname(cconv.__file__), "kinds", "*.json")))


def arrays():
    x = np.random.default_rng(0).standard_normal((2, 16, 12, 12)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 16, 3, 3)).astype(np.float32)
    return x, w


def other_method(op="forward") -> Backend:
    """A method that can run LAYER's problem and is not the rules' choice."""
    q = _tuning._problem_of_layer(LAYER, "float32", op)
    default = _dispatch._default(q)[0]
    return next(b for b in _dispatch.candidates(q) if b is not default)


def table_doc(rows, kind=None, **over) -> dict:
    doc = _kind.document(kind or _kind.cpu_kind(), rows, 1.1, "2026-12-03")
    doc.update(over)
    return doc


def entry(method, op="forward", threads=None) -> dict:
    q = _tuning._problem_of_layer(LAYER, "float32", op)
    return {"problem": _tuning.problem_key(q), "threads": threads or cconv.get_num_threads(),
            "method": method, "default": _dispatch._default(q)[0].value, "ms": {}}


def test_cpu_kind_names_vendor_and_isa():
    kinds = _kind.cpu_kinds()
    isa = _dispatch.simd_level()
    isa = isa if " " not in isa else "scalar"
    assert kinds[-1] == f"{_kind.vendor()}-{isa}"
    assert _kind.cpu_kind() == kinds[0]
    core = _kind.core()
    assert kinds == ([f"{_kind.vendor()}-{core}-{isa}"] if core else []) + [kinds[-1]]
    for k in kinds:
        assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)?-[a-z0-9]+", k), k


@pytest.mark.parametrize("vendor,family,isa,want", [
    ("amd", "25", "avx512", "zen4"),   # Zen 4: AVX-512 on 256-bit units
    ("amd", "25", "avx2", "zen3"),     # Zen 3 (family 25 without AVX-512)
    ("amd", "26", "avx512", "zen5"),
    ("amd", "23", "avx2", "zen2"),
    ("amd", "21", "avx2", None),       # a family cconv does not name
    ("amd", None, "avx2", None),
    ("amd", "x", "avx2", None),
    ("intel", "6", "avx512", None),    # Intel's cores are not told apart
    ("arm", None, "neon", None),
])
def test_core_of(vendor, family, isa, want):
    assert _kind.core_of(vendor, family, isa) == want


def test_the_most_specific_shipped_table_is_loaded(tmp_path, monkeypatch):
    """A CPU whose core has a kind of its own takes that kind's table where
    there is one, else its vendor and ISA's."""
    monkeypatch.setattr(_kind, "core", lambda: "zen9")
    specific, generic = _kind.cpu_kinds()
    assert specific.split("-")[1] == "zen9" and generic == f"{_kind.vendor()}-{specific.split('-')[2]}"
    monkeypatch.setattr(_kind, "_DIR", str(tmp_path))
    monkeypatch.setattr(_kind, "_loaded", [])
    monkeypatch.delenv("CCONV_KIND_DEFAULTS", raising=False)
    a, b = other_method(), None
    q = _tuning._problem_of_layer(LAYER, "float32", "forward")
    b = next((m for m in _dispatch.candidates(q) if m not in (a, _dispatch._default(q)[0])), a)
    _kind.load_at_import()   # no table at all
    assert _kind.loaded_kind() is None and not _dispatch._kind_defaults
    (tmp_path / f"{generic}.json").write_text(json.dumps(table_doc([entry(a.value)], kind=generic)))
    _kind.load_at_import()
    assert _kind.loaded_kind() == (generic, str(tmp_path / f"{generic}.json"))
    assert list(_dispatch._kind_defaults.values()) == [a]
    (tmp_path / f"{specific}.json").write_text(json.dumps(table_doc([entry(b.value)], kind=specific)))
    _kind.load_at_import()
    assert _kind.loaded_kind()[0] == specific
    assert list(_dispatch._kind_defaults.values()) == [b]
    # a table of the specific kind is foreign to a CPU of the generic kind only
    with pytest.warns(RuntimeWarning, match="is the table of"):
        assert _kind.read_table(str(tmp_path / f"{specific}.json"), generic) == {}


@pytest.mark.parametrize("path", TABLES, ids=[os.path.basename(p) for p in TABLES])
def test_shipped_tables_are_valid(path):
    """Each entry: a problem that parses, a method that can run it (with
    any data), timed faster than every other method and than the rules'
    choice by the margin."""
    doc = json.load(open(path))
    kind = os.path.basename(path)[:-5]
    assert doc["format"] == _kind.FORMAT and doc["version"] == _kind.VERSION and doc["kind"] == kind
    assert doc["measured_on"]["cpu"] and doc["measured_on"]["date"]
    assert doc["entries"], "an empty table"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = _kind.read_table(path, kind)
    assert len(table) == len(doc["entries"])  # no two entries for one problem
    for e in doc["entries"]:
        q = _tuning.problem_from_key(e["problem"])
        b = Backend(e["method"])
        assert _dispatch.why_not(b, q) is None, (e["layer"], e["problem"]["op"], b)
        ms = e["ms"]
        assert min(ms, key=ms.get) == b.value
        assert e["default"] != b.value and ms[e["default"]] / ms[b.value] >= doc["margin"]


def test_a_table_s_winner_runs_and_is_explained(restore_threads):
    x, w = arrays()
    b = other_method()
    _dispatch.set_kind_defaults(_kind.read_table_doc(table_doc([entry(b.value)])))
    c = cconv.select_backend(x, w, padding=1, explain=True)
    assert (c.backend, c.source) == (b, "cpu-kind")
    with _trace.recording() as ev:
        y = cconv.conv2d(x, w, padding=1)   # the plan cache follows the table
    assert ev and ev[-1][1] == {"gemm": "im2col"}.get(b.value, b.value)
    assert rel_err(y, ref_conv(x.astype(float), w.astype(float), None, 1, 1)) < 1e-5
    # another thread count: not this table's entry
    cconv.set_num_threads(1 if cconv.get_num_threads() > 1 else 2)
    assert cconv.select_backend(x, w, padding=1, explain=True).source == "default"
    _dispatch.set_kind_defaults({})
    assert cconv.select_backend(x, w, padding=1, explain=True).source == "default"


def test_tuning_file_and_benchmark_mode_come_first():
    x, w = arrays()
    q = _tuning._problem_of_layer(LAYER, "float32", "forward")
    cands = [b for b in _dispatch.candidates(q) if b is not _dispatch._default(q)[0]]
    if len(cands) < 2:
        cands = cands + [_dispatch._default(q)[0]]
    _dispatch.set_kind_defaults({(q, cconv.get_num_threads()): cands[0]})
    _dispatch.set_tuning({(q, cconv.get_num_threads()): cands[1]})
    c = cconv.select_backend(x, w, padding=1, explain=True)
    assert (c.backend, c.source) == (cands[1], "tuning")
    _dispatch.set_tuning({})
    with cconv.benchmark():
        cconv.conv2d(x, w, padding=1)
        assert cconv.select_backend(x, w, padding=1, explain=True).source == "benchmark"


def test_a_winner_that_cannot_keep_nan_falls_back():
    """A table's winner whose results would move a NaN of the weight is
    not taken for such a weight (the rules' NaN choice runs)."""
    x, w = arrays()
    w[0, 0, 1, 1] = np.nan
    q = _tuning._problem_of_layer(LAYER, "float32", "forward")
    for b in _dispatch.candidates(q):
        _dispatch.set_kind_defaults({(q, cconv.get_num_threads()): b})
        y = cconv.conv2d(x, w, padding=1)
        ref = ref_conv(x.astype(float), w.astype(float), None, 1, 1)
        assert np.array_equal(np.isnan(y), np.isnan(ref)), b


def run_py(code, **env) -> subprocess.CompletedProcess:
    e = dict(os.environ, PYTHONWARNINGS="default", **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=e, cwd=HERE, timeout=300)


CHECK = """
import numpy as np, cconv
x = np.zeros((2, 16, 12, 12), np.float32); w = np.zeros((16, 16, 3, 3), np.float32)
c = cconv.select_backend(x, w, padding=1, explain=True)
print(c.backend.value, c.source)
"""


def test_a_new_process_loads_a_table_and_can_turn_it_off(tmp_path):
    b = other_method()
    path = tmp_path / "kind.json"
    path.write_text(json.dumps(table_doc([entry(b.value)])))
    r = run_py(CHECK, CCONV_KIND_DEFAULTS=str(path))
    assert r.returncode == 0 and r.stdout.split() == [b.value, "cpu-kind"], r.stdout + r.stderr
    assert "ignoring" not in r.stderr
    r = run_py(CHECK, CCONV_KIND_DEFAULTS="0")
    assert r.stdout.split()[1] == "default", r.stdout + r.stderr


def test_the_shipped_table_of_this_kind_is_loaded():
    """With no setting, the table of this machine's kind (where cconv ships
    one) is loaded, and a problem it lists gets its method."""
    kind = next((k for k in _kind.cpu_kinds() if os.path.exists(_kind.table_path(k))), None)
    r = run_py("""
        import cconv
        from cconv import _dispatch, _kind
        print(len(_dispatch._kind_defaults), (_kind.loaded_kind() or ["none"])[0])
    """, CCONV_KIND_DEFAULTS="1")
    assert r.returncode == 0, r.stderr
    want = len(_kind.read_table(_kind.table_path(kind), kind)) if kind else 0
    assert r.stdout.split() == [str(want), kind or "none"]
    assert "ignoring" not in r.stderr


@pytest.mark.parametrize("bad", ["garbage", "other_format", "version", "foreign_kind", "no_entries",
                                 "bad_entry", "unknown_method", "missing"])
def test_bad_tables_are_ignored_with_a_warning(tmp_path, bad):
    path = tmp_path / "kind.json"
    good = [entry(other_method().value)]
    docs = {
        "other_format": table_doc(good, format="cconv-tuning"),
        "version": table_doc(good, version=7),
        "foreign_kind": table_doc(good, kind="acme-avx9"),
        "no_entries": table_doc(good, entries={"a": 1}),
        "bad_entry": table_doc(good + [{"problem": {"nsp": "two"}, "threads": 1, "method": "gemm"}]),
        "unknown_method": table_doc(good + [dict(good[0], method="quantum", threads=99)]),
    }
    if bad == "garbage":
        path.write_bytes(b"\xff\x00{")
    elif bad != "missing":
        path.write_text(json.dumps(docs[bad]))
    r = run_py(CHECK, CCONV_KIND_DEFAULTS=str(path))
    assert r.returncode == 0, r.stderr
    assert "cconv" in r.stderr and ("ignoring" in r.stderr or "left out" in r.stderr), r.stderr
    method, source = r.stdout.split()
    if bad in ("bad_entry", "unknown_method"):  # the good entry still counts
        assert (method, source) == (good[0]["method"], "cpu-kind")
    else:
        assert source == "default"
