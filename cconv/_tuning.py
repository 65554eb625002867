"""Persistent tuning: measure every method that can run a list of layers on
this machine and keep the winners in a file that later processes load.

``tune(layers)`` times, for each layer and operation, every method the
dispatcher lists as able to compute it (each forced, in interleaved blocks
of calls), records the fastest in the dispatcher's table of tuned winners
(``_dispatch.set_tuning``) and writes the tuning file.  The file is JSON:

    {"format": "cconv-tuning", "version": 1, "cconv": "<version>",
     "machine": {"cpu": "<model name>", "core": "family <n> model <n>", "isa": "<SIMD level>",
                 "arch": "<machine>"},
     "entries": [{"problem": {...ConvParams fields, "dtype", "op", "channels_last"},
                  "threads": 2, "method": "implicit_gemm", "ms": {"gemm": 1.2, ...}}]}

At import cconv loads ``CCONV_TUNE_FILE`` (default: ``tuning.json`` under
``$XDG_CACHE_HOME/cconv``, else ``~/.cache/cconv``); a file that does not
parse, was written for another CPU or instruction set, by another file
format, or names methods this cconv does not have is ignored (wholly or per
entry) with a RuntimeWarning, never an error.  ``record_layers()`` collects
the problems a program runs, for ``tune`` to take later.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import tempfile
import time
import warnings
from typing import Any, Iterable, Iterator

import numpy as np

from . import _dispatch
from ._dispatch import Backend, Problem
from ._params import ConvParams

__all__ = ["tune", "record_layers", "load", "default_path", "machine", "TuneResult"]

FORMAT = "cconv-tuning"
VERSION = 1
OPS = ("forward", "grad_input", "grad_weight")
_FIELDS = ("nsp", "transposed", "batch", "c_in", "c_out", "groups", "in_size", "out_size", "kernel",
           "stride", "pad_before", "pad_after", "dilation", "output_padding")


def default_path() -> str:
    """Where the tuning file lives: ``CCONV_TUNE_FILE``, else ``tuning.json``
    in cconv's folder of the user's cache directory."""
    env = os.environ.get("CCONV_TUNE_FILE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cconv", "tuning.json")


def _cpuinfo_pairs():
    """(field, value) of each /proc/cpuinfo line (none where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep:
                    yield key, value.strip()
    except OSError:
        return


def cpuinfo_value(keys: tuple) -> str | None:
    """The first /proc/cpuinfo value whose line starts with one of ``keys``
    (None where there is none or the file cannot be read)."""
    return next((v for k, v in _cpuinfo_pairs() if k.startswith(keys)), None)


def cpuinfo_field(name: str) -> str | None:
    """The first /proc/cpuinfo value of the field called exactly ``name``
    ('model' is not 'model name'); None where there is none."""
    return next((v for k, v in _cpuinfo_pairs() if k.strip() == name), None)


def _cpu_model() -> str:
    return cpuinfo_value(("model name", "Model", "CPU part")) or platform.processor() or "unknown"


def cpu_core() -> str:
    """The CPU's family and model numbers (x86: 'family 25 model 17'; ARM:
    'part 0xd40'): virtual machines often name every CPU of a vendor alike
    ('AMD EPYC'), and these numbers tell its generations apart."""
    fam, model = cpuinfo_field("cpu family"), cpuinfo_field("model")
    if fam is not None and model is not None:
        return f"family {fam} model {model}"
    part = cpuinfo_field("CPU part")
    return f"part {part}" if part else "unknown"


def machine() -> dict:
    """What a tuning file is keyed by: the CPU model (its name and its
    family / model numbers), the instruction set cconv's kernels use, and
    the machine architecture."""
    return {"cpu": _cpu_model(), "core": cpu_core(), "isa": _dispatch.simd_level(),
            "arch": platform.machine()}


# --------------------------------------------------------------------------
# problems <-> JSON
# --------------------------------------------------------------------------
def problem_key(q: Problem) -> dict:
    p = q.p
    d = {f: (list(v) if isinstance(v, tuple) else v) for f in _FIELDS for v in (getattr(p, f),)}
    d.update(dtype=np.dtype(p.dtype).name, op=q.op, channels_last=bool(q.channels_last))
    return d


def problem_from_key(d: dict) -> Problem:
    """The Problem a file entry stands for (ValueError/TypeError/KeyError
    for a malformed one)."""
    kw = {}
    for f in _FIELDS:
        v = d[f]
        if f == "transposed":
            if not isinstance(v, bool):
                raise TypeError("transposed")
            kw[f] = v
        elif isinstance(v, list):
            if not all(type(e) is int for e in v):
                raise TypeError(f)
            kw[f] = tuple(v)
        elif type(v) is int:
            kw[f] = v
        else:
            raise TypeError(f)
    dt = np.dtype(d["dtype"])
    if dt not in (np.float32, np.float64):
        raise ValueError("dtype")
    op = d["op"]
    if op not in OPS:
        raise ValueError("op")
    p = ConvParams(dtype=dt, **kw)
    return Problem(p, np, op, bool(d.get("channels_last", False)))


# --------------------------------------------------------------------------
# the file
# --------------------------------------------------------------------------
def _warn(path: str, why: str) -> None:
    warnings.warn(f"cconv: ignoring the tuning file {path}: {why}", RuntimeWarning, stacklevel=3)


def read(path: str, *, quiet_missing: bool = True) -> dict:
    """The winners of the tuning file at ``path`` ((q, threads) -> Backend),
    with warnings for what is ignored; {} for a missing file."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        if not quiet_missing:
            _warn(path, "it does not exist")
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as e:
        _warn(path, f"it cannot be read as JSON ({type(e).__name__}: {e})")
        return {}
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        _warn(path, "it is not a cconv tuning file")
        return {}
    if doc.get("version") != VERSION:
        _warn(path, f"it has format version {doc.get('version')!r}, this cconv reads {VERSION}")
        return {}
    here, there = machine(), doc.get("machine")
    if not isinstance(there, dict) or any(there.get(k) != here[k] for k in here):
        _warn(path, f"it was measured on {there!r}, this machine is {here!r} (run cconv tune here)")
        return {}
    entries = doc.get("entries")
    if not isinstance(entries, list):
        _warn(path, "it has no list of entries")
        return {}
    table, bad, stale = parse_entries(entries)
    if bad or stale:
        warnings.warn(f"cconv: the tuning file {path}: {bad} malformed and {stale} stale entries "
                      f"ignored (of {len(entries)})", RuntimeWarning, stacklevel=2)
    return table


def parse_entries(entries: list) -> tuple:
    """(table, malformed, stale) of a file's entries: the table maps
    (Problem, threads) -> Backend; an entry that does not parse is
    malformed, one naming a method this cconv does not have stale (both
    left out).  The tuning file and the CPU-kind tables share the form."""
    table, bad, stale = {}, 0, 0
    for e in entries:
        try:
            q = problem_from_key(e["problem"])
            nt = e["threads"]
            if type(nt) is not int or nt < 1:
                raise ValueError("threads")
            name = e["method"]
            if not isinstance(name, str):
                raise TypeError("method")
        except (KeyError, TypeError, ValueError, AttributeError):
            bad += 1
            continue
        try:
            b = _dispatch.as_backend(name)
        except (ValueError, TypeError):
            stale += 1  # a method this cconv does not have
            continue
        table[(q, nt)] = b
    return table, bad, stale


def entry_key(e: dict) -> tuple:
    """What identifies a file entry: its problem and thread count (a newer
    entry of the same key replaces an older one)."""
    return json.dumps(e["problem"], sort_keys=True), e["threads"]


def enabled() -> bool:
    """Whether the tuning file is read at import (``CCONV_TUNE_FILE`` set to
    an empty string turns it off)."""
    return os.environ.get("CCONV_TUNE_FILE", None) != ""


def load_at_import() -> None:
    """Load the tuning file when cconv is imported (quietly when there is
    none; nothing when it is turned off)."""
    if not enabled():
        return
    table = read(default_path())
    if table:
        _dispatch.set_tuning(table)


def load(path: str | None = None) -> int:
    """Load the tuning file (``default_path()`` when None) into the
    dispatcher, replacing the winners loaded before; the number of
    entries taken."""
    table = read(path or default_path())
    _dispatch.set_tuning(table)
    return len(table)


def _write(path: str, entries: list) -> None:
    doc = {"format": FORMAT, "version": VERSION, "cconv": _version(), "machine": machine(),
           "entries": entries}
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tuning-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)  # readers never see a half-written file
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _version() -> str:
    from . import __version__

    return __version__


def _existing_entries(path: str) -> list:
    """The entries of a readable file of this machine (kept when adding)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError, UnicodeDecodeError):
        return []
    if (isinstance(doc, dict) and doc.get("format") == FORMAT and doc.get("version") == VERSION
            and doc.get("machine") == machine() and isinstance(doc.get("entries"), list)):
        return [e for e in doc["entries"] if isinstance(e, dict)]
    return []


# --------------------------------------------------------------------------
# layers and problems to tune
# --------------------------------------------------------------------------
def _problem_of_layer(layer, dtype, op: str) -> Problem:
    from ._args import compute_dtype
    from ._params import make_params

    s, p, d, tr, opad, g = layer.conv_args()
    dt = np.dtype(dtype)
    prm = make_params(layer.input_shape(), layer.weight_shape(), None, s, p, d, tr, opad, g,
                      "tune", compute_dtype(dt), dt)
    return Problem(prm, np, op)


def _as_problems(layers, dtypes, ops) -> list:
    out = []
    for item in layers:
        if isinstance(item, Problem):
            out.append(item)
            continue
        if isinstance(item, dict):  # a recorded problem
            out.append(problem_from_key(item))
            continue
        for dt in dtypes:
            for op in ops:
                out.append(_problem_of_layer(item, dt, op))
    return out


def _arrays(q: Problem, rng) -> tuple:
    p = q.p
    dt = np.dtype(p.dtype)
    x = rng.standard_normal(p.input_shape).astype(dt)
    if q.channels_last:
        nd = x.ndim
        x = np.ascontiguousarray(x.transpose((0,) + tuple(range(2, nd)) + (1,))).transpose(
            (0, nd - 1) + tuple(range(1, nd - 1)))
    w = rng.standard_normal(p.weight_shape).astype(dt)
    gy = rng.standard_normal(p.output_shape).astype(dt)
    return x, w, gy


def _runner(q: Problem, x, w, gy):
    from . import _backward, _functional

    p = q.p
    # (unequal padding before and after: only 'same' asks for it)
    args = (p.stride, p.pad_before if p.pad_before == p.pad_after else "same", p.dilation,
            p.transposed, p.output_padding, p.groups)
    if q.op == "forward":
        return lambda b: _functional.convolution(x, w, None, *args, backend=b)
    mask = (q.op == "grad_input", q.op == "grad_weight", False)
    return lambda b: _backward.convolution_backward(gy, x, w, None, *args, mask, backend=b)


class TuneResult(dict):
    """One tuned problem: ``problem`` (the file's key), ``threads``,
    ``method`` (the winner's value), ``default`` (what the default choice
    runs), ``ms`` (median time of every method, ms) and ``speedup``
    (default time / winner time)."""


def _time_methods(q: Problem, run, repeat: int, block_s: float) -> dict:
    cands = _dispatch.candidates(q)
    reps = {}
    for b in cands:  # warm up; calls per block ~ block_s
        run(b)
        t0 = time.perf_counter()
        run(b)
        t = time.perf_counter() - t0
        reps[b] = max(1, min(100, int(block_s / max(t, 1e-7))))
    times = {b: [] for b in cands}
    for _ in range(repeat):  # interleaved blocks
        for b in cands:
            t0 = time.perf_counter()
            for _ in range(reps[b]):
                run(b)
            times[b].append((time.perf_counter() - t0) / reps[b])
    return {b: float(np.median(v)) * 1e3 for b, v in times.items()}


def tune(layers: Iterable[Any] | None = None, *, ops: Iterable[str] = ("forward",),
         dtypes: Iterable[Any] = ("float32",), threads: int | None = None,
         file: str | None = None, repeat: int = 5, block_seconds: float = 0.02,
         save: bool = True) -> list:
    """Time every method that can run each layer and keep the fastest.

    Parameters
    ----------
    layers : iterable, optional
        ``cconv._layer.Layer``-like objects, problems recorded by
        :func:`record_layers` (dicts), or ``Problem`` objects; the built-in
        sets of well-known networks when None.
    ops : iterable of {'forward', 'grad_input', 'grad_weight'}, default ('forward',)
        The operations to tune each layer for.
    dtypes : iterable of {'float32', 'float64'}, default ('float32',)
        The dtypes to tune each layer for.
    threads : int, optional
        The thread count to tune at (the current setting when None).
    file : str, optional
        The tuning file to add the winners to (``default_path()`` when None).
    repeat : int, default 5
        Timed blocks per method.
    block_seconds : float, default 0.02
        The length of one timed block.
    save : bool, default True
        Add the winners to the tuning file (they take effect at once either
        way), replacing older entries of the same problems.

    Returns
    -------
    list of TuneResult
        One per problem: the problem, the times of each method, the winner.

    Raises
    ------
    ValueError
        An unknown operation, a dtype other than float32/float64, a
        ``repeat`` below 1.

    See Also
    --------
    record_layers : the problems a piece of code runs, to tune them.
    set_benchmark : measure on the first call instead, for this process only.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((1, 8, 16, 16), np.float32)
    >>> w = np.ones((8, 8, 3, 3), np.float32)
    >>> with cconv.record_layers() as problems:
    ...     y = cconv.conv2d(x, w, padding=1)
    >>> results = cconv.tune(problems, save=False, repeat=1, block_seconds=0.001)
    >>> len(results) == len(problems) >= 1
    True
    """
    from . import _config
    from ._zoo import CASES, EXTRA

    ops = tuple(ops)
    for op in ops:
        if op not in OPS:
            raise ValueError(f"tune: unknown operation {op!r}; expected one of {', '.join(OPS)}")
    dtypes = tuple(np.dtype(d) for d in dtypes)
    for d in dtypes:
        if d not in (np.float32, np.float64):
            raise ValueError(f"tune: dtypes must be float32 or float64, not {d}")
    if repeat < 1:
        raise ValueError(f"tune: repeat must be >= 1, not {repeat}")
    if layers is None:
        layers = list(CASES.values()) + list(EXTRA.values())
    problems = _as_problems(list(layers), dtypes, ops)
    old_threads = _config.get_num_threads()
    if threads is not None:
        _config.set_num_threads(threads)
    nt = _config.get_num_threads()
    rng = np.random.default_rng(0)
    results = []
    table = dict(_dispatch._tuning)
    try:
        for q in problems:
            x, w, gy = _arrays(q, rng)
            ms = _time_methods(q, _runner(q, x, w, gy), repeat, block_seconds)
            best = min(ms, key=ms.get)
            default = _dispatch._preferred(q)[0]  # (this CPU kind's table, else the rules)
            table[(q, nt)] = best
            res = TuneResult(problem=problem_key(q), threads=nt, method=best.value,
                             default=default.value, ms={b.value: round(t, 6) for b, t in ms.items()},
                             speedup=ms.get(default, float("nan")) / ms[best])
            results.append(res)
    finally:
        if threads is not None:
            _config.set_num_threads(old_threads)
    _dispatch.set_tuning(table)
    if save:
        path = file or default_path()
        keep = {}
        for e in _existing_entries(path):
            with contextlib.suppress(Exception):
                keep[entry_key(e)] = e
        for r in results:
            keep[entry_key(r)] = {
                "problem": r["problem"], "threads": r["threads"], "method": r["method"], "ms": r["ms"]}
        _write(path, list(keep.values()))
    return results


# --------------------------------------------------------------------------
# recording the problems a program runs
# --------------------------------------------------------------------------
@contextlib.contextmanager
def record_layers(path: str | None = None) -> Iterator[list]:
    """Record the distinct problems the code inside a ``with`` block runs.

    Every problem the dispatcher chooses a method for (forward and
    gradients, NumPy arrays) is added to the list the block yields, in the
    form :func:`tune` takes.

    Parameters
    ----------
    path : str, optional
        Also write the problems there as JSON when the block ends.

    Yields
    ------
    list of dict
        The recorded problems (filled when the block ends).

    See Also
    --------
    tune

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((2, 4, 10, 10), np.float32)
    >>> with cconv.record_layers() as problems:
    ...     y = cconv.conv2d(x, np.ones((4, 1, 3, 3), np.float32), groups=4)
    >>> len(problems)
    1
    """
    seen: dict = {}
    recorded: list = []
    _dispatch.set_recorder(seen)
    try:
        yield recorded
    finally:
        _dispatch.set_recorder(None)
        recorded.extend(problem_key(q) for q in seen if q.xp is np)
        if path is not None:
            d = os.path.dirname(os.path.abspath(path))
            os.makedirs(d, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"format": "cconv-problems", "problems": recorded}, f, indent=1)


def read_recorded(path: str) -> list:
    """The problems a ``record_layers(path)`` block wrote (ValueError for a
    file that is not one)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or doc.get("format") != "cconv-problems" or not isinstance(
            doc.get("problems"), list):
        raise ValueError(f"{path} is not a file of recorded cconv problems")
    return doc["problems"]
