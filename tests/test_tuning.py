"""Persistent tuning (cconv.tune, the tuning file, record_layers): tuned
winners take effect in this process and in a new one that loads the file;
corrupt, foreign, stale and mismatched files or entries are ignored with a
warning, never an error or a wrong result."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cconv
from cconv import Backend, _dispatch, _trace, _tuning
from cconv._layer import Layer
from reference import ref_conv, rel_err

HERE = os.path.dirname(os.path.abspath(__file__))


def run_py(code: str, tune_file: str | None, **env_over) -> subprocess.CompletedProcess:
    """Run ``code`` in a new process with CCONV_TUNE_FILE set to ``tune_file``
    (unset for None, so the default path applies)."""
    env = dict(os.environ)
    env.pop("CCONV_TUNE_FILE", None)
    if tune_file is not None:
        env["CCONV_TUNE_FILE"] = tune_file
    env["PYTHONWARNINGS"] = "default"
    env.update(env_over)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, cwd=HERE, timeout=300)


LAYER = Layer("t3x3", 2, 16, 16, (12, 12), (3, 3), padding=1)


def entry(method: str, layer=LAYER, op="forward", threads=None, dtype="float32") -> dict:
    q = _tuning._problem_of_layer(layer, dtype, op)
    return {"problem": _tuning.problem_key(q), "threads": threads or cconv.get_num_threads(),
            "method": method, "ms": {}}


def write_file(path, entries, **over) -> None:
    doc = {"format": _tuning.FORMAT, "version": _tuning.VERSION, "cconv": cconv.__version__,
           "machine": _tuning.machine(), "entries": entries}
    doc.update(over)
    with open(path, "w") as f:
        json.dump(doc, f)


CHECK = """
import warnings, numpy as np, cconv
from cconv import _trace
x = np.random.default_rng(0).standard_normal((2, 16, 12, 12)).astype(np.float32)
w = np.random.default_rng(1).standard_normal((16, 16, 3, 3)).astype(np.float32)
c = cconv.select_backend(x, w, padding=1, explain=True)
with _trace.recording() as ev:
    cconv.conv2d(x, w, padding=1)
print(c.backend.value, c.source, ev[-1][1])
"""


def test_tuned_method_is_picked_by_a_new_process(tmp_path):
    """A file naming a non-default method for a layer: a new process that
    loads it runs that method, and select_backend says it came from the
    file; without the file, the default."""
    default = cconv.select_backend(np.zeros((2, 16, 12, 12), np.float32),
                                   np.zeros((16, 16, 3, 3), np.float32), padding=1)
    forced = Backend.GEMM if default is not Backend.GEMM else Backend.SHIFT
    path = tmp_path / "tuning.json"
    write_file(path, [entry(forced.value)])
    r = run_py(CHECK, str(path))
    assert r.returncode == 0, r.stderr
    traced = {"gemm": "im2col"}.get(forced.value, forced.value)
    assert r.stdout.split() == [forced.value, "tuning", traced], r.stdout + r.stderr
    assert "ignoring" not in r.stderr
    r = run_py(CHECK, "")
    assert r.stdout.split()[:2] == [default.value, "default"], r.stdout + r.stderr


def test_tune_writes_and_a_new_process_uses_it(tmp_path):
    path = tmp_path / "t.json"
    res = cconv.tune([LAYER], ops=("forward", "grad_input"), file=str(path), repeat=2,
                     block_seconds=0.002)
    assert [r["problem"]["op"] for r in res] == ["forward", "grad_input"]
    for r in res:
        assert r["method"] in r["ms"] and r["default"] in r["ms"] and r["speedup"] >= 1.0
        assert min(r["ms"], key=r["ms"].get) == r["method"]
    doc = json.load(open(path))
    assert doc["machine"] == _tuning.machine() and len(doc["entries"]) == 2
    # this process: the winners at once
    x = np.random.default_rng(0).standard_normal((2, 16, 12, 12)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 16, 3, 3)).astype(np.float32)
    c = cconv.select_backend(x, w, padding=1, explain=True)
    assert (c.backend.value, c.source) == (res[0]["method"], "tuning")
    assert rel_err(cconv.conv2d(x, w, padding=1), ref_conv(x.astype(float), w.astype(float), None, 1, 1)) < 1e-5
    # a new process
    r = run_py(CHECK, str(path))
    assert r.returncode == 0 and r.stdout.split()[:2] == [res[0]["method"], "tuning"], r.stdout + r.stderr
    # tuning again replaces the entry, keeps the other
    cconv.tune([LAYER], file=str(path), repeat=1, block_seconds=0.001)
    assert len(json.load(open(path))["entries"]) == 2


def test_tune_reports_the_default_that_runs(monkeypatch):
    """A tune result's ``default`` is what runs when nothing is tuned: this
    CPU kind's table where it has the problem, not only the rules' choice
    (an entry of the table moved it, and the speedup with it)."""
    q = _tuning._problem_of_layer(LAYER, "float32", "forward")
    rules = _dispatch._default(q)[0]
    other = next(b for b in _dispatch.candidates(q) if b is not rules)
    monkeypatch.setattr(_dispatch, "_kind_defaults", {(q, cconv.get_num_threads()): other})
    monkeypatch.setattr(_dispatch, "_choice", {})
    x = np.random.default_rng(0).standard_normal((2, 16, 12, 12)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 16, 3, 3)).astype(np.float32)
    c = cconv.select_backend(x, w, padding=1, explain=True)
    assert (c.backend, c.source) == (other, "cpu-kind")
    (r,) = cconv.tune([LAYER], save=False, repeat=1, block_seconds=0.001)
    assert r["default"] == other.value != rules.value
    assert r["speedup"] == pytest.approx(r["ms"][other.value] / r["ms"][r["method"]], rel=1e-3)


@pytest.mark.parametrize("kind", ["garbage", "not_json_object", "other_format", "version",
                                  "foreign_cpu", "foreign_core", "no_core", "foreign_isa", "no_entries"])
def test_bad_files_are_ignored_with_a_warning(tmp_path, kind):
    path = tmp_path / "tuning.json"
    good = [entry("gemm")]
    if kind == "garbage":
        path.write_bytes(b"\x00\xff{ not json")
    elif kind == "not_json_object":
        path.write_text("[1, 2, 3]")
    elif kind == "other_format":
        write_file(path, good, format="something-else")
    elif kind == "version":
        write_file(path, good, version=99)
    elif kind == "foreign_cpu":
        write_file(path, good, machine=dict(_tuning.machine(), cpu="Some Other CPU"))
    elif kind == "foreign_core":  # the same model name, another generation (a VM's "AMD EPYC")
        write_file(path, good, machine=dict(_tuning.machine(), core="family 99 model 1"))
    elif kind == "no_core":  # a file of a cconv that did not record the core
        write_file(path, good, machine={k: v for k, v in _tuning.machine().items() if k != "core"})
    elif kind == "foreign_isa":
        write_file(path, good, machine=dict(_tuning.machine(), isa="neon"))
    else:
        write_file(path, "nope")
    r = run_py(CHECK, str(path))
    assert r.returncode == 0, r.stderr
    assert "ignoring the tuning file" in r.stderr and "RuntimeWarning" in r.stderr, r.stderr
    assert r.stdout.split()[1] == "default", r.stdout


def test_stale_and_malformed_entries_are_skipped(tmp_path):
    path = tmp_path / "tuning.json"
    bad_problem = entry("gemm")
    bad_problem["problem"]["kernel"] = "three"
    write_file(path, [entry("no_such_method"), bad_problem, {"threads": 2}, entry("gemm")])
    r = run_py(CHECK, str(path))
    assert r.returncode == 0, r.stderr
    assert "2 malformed and 1 stale entries" in r.stderr, r.stderr
    assert r.stdout.split()[:2] == ["gemm", "tuning"], r.stdout


def test_a_tuned_method_that_cannot_run_is_not_used():
    """An entry naming a method that cannot compute its problem (a file
    edited by hand): the default choice runs, with the right values."""
    layer = Layer("s2", 2, 16, 16, (12, 12), (3, 3), stride=2, padding=1)
    q = _tuning._problem_of_layer(layer, "float32", "forward")
    _dispatch.set_tuning({(q, cconv.get_num_threads()): Backend.WINOGRAD_3X3})
    x = np.random.default_rng(0).standard_normal((2, 16, 12, 12)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((16, 16, 3, 3)).astype(np.float32)
    c = cconv.select_backend(x, w, stride=2, padding=1, explain=True)
    assert c.source == "default" and c.backend is not Backend.WINOGRAD_3X3
    y = cconv.conv2d(x, w, stride=2, padding=1)
    assert rel_err(y, ref_conv(x.astype(float), w.astype(float), None, 2, 1)) < 1e-5


def test_thread_count_is_part_of_the_key(restore_threads):
    layer = LAYER
    q = _tuning._problem_of_layer(layer, "float32", "forward")
    _dispatch.set_tuning({(q, 1): Backend.GEMM})
    x = np.zeros((2, 16, 12, 12), np.float32)
    w = np.zeros((16, 16, 3, 3), np.float32)
    cconv.set_num_threads(1)
    assert cconv.select_backend(x, w, padding=1, explain=True) == (Backend.GEMM, "tuning")
    cconv.set_num_threads(2)
    assert cconv.select_backend(x, w, padding=1, explain=True).source == "default"


def test_record_layers_then_tune(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 9, 9)).astype(np.float32)
    w = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    xl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    path = tmp_path / "rec.json"
    cconv.conv2d(x, w, padding=1)  # seen before recording: recorded anyway when it runs again
    with cconv.record_layers(str(path)) as rec:
        for _ in range(3):
            y = cconv.conv2d(x, w, padding=1)
            cconv.conv2d(xl, w, padding=1)
            cconv.convolution_backward(y, x, w, None, 1, 1, 1, False, 0, 1, (True, True, False))
    ops = sorted((r["op"], r["channels_last"]) for r in rec)
    assert ops == [("forward", False), ("forward", True), ("grad_input", False), ("grad_weight", False)], ops
    assert _tuning.read_recorded(str(path)) == rec
    res = cconv.tune(_tuning.read_recorded(str(path)), file=str(tmp_path / "t.json"), repeat=1,
                     block_seconds=0.001)
    assert len(res) == 4
    with pytest.raises(ValueError, match="recorded"):
        _tuning.read_recorded(str(tmp_path / "t.json"))


@pytest.mark.parametrize("kw,match", [
    (dict(ops=("backward",)), "operation"),
    (dict(dtypes=("float16",)), "float32 or float64"),
    (dict(repeat=0), "repeat"),
])
def test_tune_argument_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        cconv.tune([LAYER], save=False, **kw)


def test_default_path_and_the_empty_variable(tmp_path):
    """Without CCONV_TUNE_FILE the file under the user's cache directory is
    loaded; CCONV_TUNE_FILE set empty loads nothing."""
    (tmp_path / "cconv").mkdir()
    write_file(tmp_path / "cconv" / "tuning.json", [entry("gemm")])
    r = run_py(CHECK, None, XDG_CACHE_HOME=str(tmp_path))
    assert r.stdout.split()[:2] == ["gemm", "tuning"], r.stdout + r.stderr
    r = run_py(CHECK, "", XDG_CACHE_HOME=str(tmp_path))
    assert r.stdout.split()[1] == "default", r.stdout + r.stderr


def test_cpu_core_reads_family_and_model():
    core = _tuning.cpu_core()
    fam, model = _tuning.cpuinfo_field("cpu family"), _tuning.cpuinfo_field("model")
    if fam is not None and model is not None:
        assert core == f"family {fam} model {model}"
        assert model.isdigit()  # the "model" field, not "model name"
    else:
        assert core.startswith("part ") or core == "unknown"
    assert _tuning.machine()["core"] == core
