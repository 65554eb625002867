#!/usr/bin/env python3
"""Combine compare.py runs and account for the speed targets, case by case.

    python benches/targets.py run1.md run2.md run3.md run4.md run5.md
    python benches/targets.py --cases run*.md          # also every case's medians
    python benches/targets.py results/compare-2026-12-06-intel-xeon-avx512.md

Reads the markdown that ``compare.py --markdown --out FILE`` writes (several
runs, or a results file holding such outputs: each begins at its
``machine:`` line), takes per case, set and thread count the median over the
runs of each run's ratio (cconv median time / peer median time), and checks
the targets cconv holds itself to against PyTorch's CPU convolution (torch)
and ONNX Runtime (ort):

  float32 forward      geometric mean <= 0.6 of torch and of ort; no dense
                       case above 1.0 of either; depthwise <= 0.3 of torch
  float32 fwd+bwd      geometric mean <= 0.6 of torch; no case above 1.1
  float64 forward      dense 3x3 <= 1.0 of torch

For each case that misses, it says how far the target is from the machine's
limits, from figures the same runs measured: the GEMM ceiling (the best of
compare.py's two big-GEMM timings at that thread count, the most of all
runs) and the copy bandwidth (a DRAM-sized copy).  Columns: cconv's share
of the ceiling, the peer's share (the same work in the peer's time), the
share the target needs (cconv's share x ratio / target), and the traffic's
share of the copy bandwidth now and as the target needs it.  A target
that needs more than 100% of the ceiling asks for more multiply-adds per
second than a big GEMM reaches on that machine: out of reach of any method
that does the convolution's multiply-adds (only fewer of them, as Winograd
does, gets there).  Arrays that stay in the caches between calls can move
faster than the copy bandwidth, so the copy column bounds only layers
whose arrays do not fit them.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks._cases import CASES, EXTRA, SMALL  # noqa: E402

KNOWN = {**CASES, **EXTRA, **SMALL}

FWD_GEOMEAN = 0.6
BWD_GEOMEAN = 0.6
DENSE = 1.0
DEPTHWISE = 0.3
BWD_CASE = 1.1
F64_DENSE_3X3 = 1.0

_NUM = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _first_number(cell: str) -> float | None:
    m = _NUM.search(cell or "")
    return float(m.group()) if m and cell.strip() not in ("-", "") else None


def _new_run(dtype: str, machine: str) -> dict:
    return {"dtype": dtype, "machine": machine, "rows": [], "ceil": {}, "copy": {}, "cache": {}}


def _best_of(line: str, prefix: str, unit: str):
    """(T, the largest "= X unit" figure) of a "prefix, T=n: ..." line, else None."""
    m = re.match(prefix + r", T=(\d+): (.*)", line)
    vals = [float(v) for v in re.findall(r"= ([\d.]+) " + unit, m.group(2))] if m else []
    return (int(m.group(1)), max(vals)) if vals else None


def parse(text: str) -> list[dict]:
    """The compare.py outputs in `text`: a list of runs, each {"dtype",
    "machine", "rows": [{column: cell}], "ceil": {T: GFLOP/s},
    "copy": {T: GB/s}, "cache": {T: {level: (bytes, GB/s)}}}."""
    runs: list[dict] = []
    cur = None
    cols = None
    heading = None      # the dtype a heading after the machine line names
    for raw in text.splitlines():
        line = raw.strip()
        if re.match(r"^\* run \d+: ", line):
            # a results file's list of its runs' ceilings, after tables of
            # its own layout: not the run the last table belongs to
            continue
        if line.startswith("machine:"):
            m = re.search(r"dtype (\w+)", line)
            cur = _new_run(m.group(1) if m else "float32", line)
            runs.append(cur)
            cols = None
            heading = None
            continue
        if cur is None:
            continue
        if line.startswith("#"):
            m = re.search(r"\b(float32|float64)\b", line)
            heading = m.group(1) if m else heading
            continue
        if line.startswith("| set |"):
            cols = [c.strip() for c in line.strip("|").split("|")]
            if "cconv ms" not in cols or "cconv/torch" not in cols:
                cols = None     # a table of another layout (per-run medians)
                continue
            if cur["rows"] or (heading and heading != cur["dtype"]):
                # a second table under one machine line (a results file's
                # own section, "## float64 ..."): a run of its own
                cur = _new_run(heading or cur["dtype"], cur["machine"])
                runs.append(cur)
            continue
        if cols and (line.startswith("| forward ") or line.startswith("| backward ")):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) == len(cols):
                cur["rows"].append(dict(zip(cols, cells)))
            continue
        got = _best_of(line, "GEMM ceiling", "GFLOP/s")
        if got:
            cur["ceil"][got[0]] = got[1]
            continue
        m = re.match(r"cache copy bandwidth, T=(\d+): (.*)", line)
        if m:
            lv = {f"L{a}": (int(b) << 10, float(c))
                  for a, b, c in re.findall(r"L(\d) (\d+) KiB = ([\d.]+) GB/s", m.group(2))}
            if lv:
                cur["cache"][int(m.group(1))] = lv
            continue
        got = _best_of(line, "copy bandwidth", "GB/s")
        if got:
            cur["copy"][got[0]] = got[1]
    return [r for r in runs if r["rows"]]


def is_depthwise(case) -> bool:
    return case.groups > 1 and case.groups == case.c_in


def is_dense_3x3(case) -> bool:
    return case.groups == 1 and all(k == 3 for k in case.kernel) and len(case.kernel) == 2


def combine(runs: list[dict]) -> tuple[dict, dict, dict]:
    """Per (dtype, set, case, T): the medians over runs.  Returns (cases,
    ceil, roofs): ceil {(dtype, T): GFLOP/s}, roofs {(dtype, T): [(level,
    bytes it holds or None, GB/s)]}, each the most any run measured."""
    ceil: dict = {}
    roofs: dict = {}
    for r in runs:
        d = r["dtype"]
        for t, v in r["ceil"].items():
            ceil[(d, t)] = max(v, ceil.get((d, t), 0.0))
        for t, v in r["copy"].items():
            roofs.setdefault((d, t), {})
            old = roofs[(d, t)].get("DRAM", (None, 0.0))[1]
            roofs[(d, t)]["DRAM"] = (None, max(v, old))
        for t, lv in r["cache"].items():
            roofs.setdefault((d, t), {})
            for level, (size, v) in lv.items():
                # a thread count's threads each have their own L2
                hold = size * t if level == "L2" else size
                old = roofs[(d, t)].get(level, (hold, 0.0))[1]
                roofs[(d, t)][level] = (hold, max(v, old))
    for lv in roofs.values():
        # a call whose arrays fit a nearer level moves them at least as fast
        # as a copy in the farther one (the small copies' own call costs
        # can make the nearer level's figure the lower one)
        for near, far in (("L3", "DRAM"), ("L2", "L3")):
            if near in lv and far in lv and lv[far][1] > lv[near][1]:
                lv[near] = (lv[near][0], lv[far][1])
    acc: dict = {}
    for r in runs:
        for row in r["rows"]:
            name = row.get("case")
            case = KNOWN.get(name)
            ms = _first_number(row.get("cconv ms", "-"))
            if case is None or ms is None or ms <= 0:
                continue
            t = int(row["T"])
            key = (r["dtype"], row["set"], name, t)
            e = acc.setdefault(key, {"torch": [], "ort": [], "gf": [], "gbs": [], "bytes": []})
            e["backend"] = row.get("backend", "?")
            for peer, col in (("torch", "cconv/torch"), ("ort", "cconv/ort")):
                v = _first_number(row.get(col, "-"))
                if v is not None and v > 0:
                    e[peer].append(v)
            flops = case.flops() * (3 if row["set"] == "backward" else 1)
            e["gf"].append(flops / (ms * 1e-3) / 1e9)
            gbs = _first_number(row.get("GB/s", "-"))
            if gbs is not None:
                e["gbs"].append(gbs)
                e["bytes"].append(gbs * 1e9 * ms * 1e-3)
    out = {}
    for key, e in acc.items():
        dtype, _, _, t = key
        c = ceil.get((dtype, t))
        gf = statistics.median(e["gf"])
        gbs = statistics.median(e["gbs"]) if e["gbs"] else None
        nbytes = statistics.median(e["bytes"]) if e["bytes"] else None
        level, bw = roof_for(roofs.get((dtype, t), {}), nbytes)
        out[key] = {
            "backend": e["backend"],
            "runs": len(e["gf"]),
            "torch": statistics.median(e["torch"]) if e["torch"] else None,
            "torch_range": (min(e["torch"]), max(e["torch"])) if e["torch"] else None,
            "ort": statistics.median(e["ort"]) if e["ort"] else None,
            "ort_range": (min(e["ort"]), max(e["ort"])) if e["ort"] else None,
            "gf": gf,
            "pct_ceil": 100.0 * gf / c if c else None,
            "bytes": nbytes,
            "level": level,
            "pct_bw": 100.0 * gbs / bw if (bw and gbs is not None) else None,
        }
    return out, ceil, roofs


def roof_for(levels: dict, nbytes) -> tuple[str | None, float | None]:
    """The copy bandwidth that bounds a call moving `nbytes`: the smallest
    measured level that holds them (L2 of the threads, L3), else DRAM's."""
    if nbytes is not None:
        for level in ("L2", "L3"):
            if level in levels and nbytes <= levels[level][0]:
                return level, levels[level][1]
    if "DRAM" in levels:
        return "DRAM", levels["DRAM"][1]
    return None, None


def gmean(v):
    v = [x for x in v if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def _ordered(cases: dict) -> list:
    """cases' items by dtype, set, thread count, case."""
    return sorted(cases.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3], kv[0][2]))


def misses(cases: dict) -> list[dict]:
    """Every (case, set, T, peer) whose median ratio misses its target, with
    the limits' figures."""
    out = []
    for (dtype, which, name, t), e in _ordered(cases):
        case = KNOWN[name]
        checks = []
        if dtype == "float32" and which == "forward":
            if is_depthwise(case):
                checks.append(("torch", DEPTHWISE, "depthwise"))
            else:
                checks += [("torch", DENSE, "dense"), ("ort", DENSE, "dense")]
        elif dtype == "float32" and which == "backward":
            checks.append(("torch", BWD_CASE, "fwd+bwd"))
        elif dtype == "float64" and which == "forward" and is_dense_3x3(case):
            checks.append(("torch", F64_DENSE_3X3, "float64 dense 3x3"))
        for peer, target, kind in checks:
            r = e[peer]
            if r is None or r <= target:
                continue
            pc, pb = e["pct_ceil"], e["pct_bw"]
            out.append({
                "dtype": dtype, "set": which, "case": name, "T": t, "peer": peer, "kind": kind,
                "target": target, "ratio": r, "range": e[f"{peer}_range"], "backend": e["backend"],
                "pct_ceil": pc, "peer_pct_ceil": pc * r if pc is not None else None,
                "need_pct_ceil": pc * r / target if pc is not None else None,
                "level": e["level"], "bytes": e["bytes"], "pct_bw": pb,
                "need_pct_bw": pb * r / target if pb is not None else None,
                "verdict": verdict(pc, pb, e["level"], r, target),
            })
    return out


def verdict(pct_ceil, pct_bw, level, ratio, target) -> str:
    """Why a target is missed, from the shares of the roofs it needs."""
    if pct_ceil is None:
        return "no ceiling measured"
    need = pct_ceil * ratio / target
    need_bw = pct_bw * ratio / target if pct_bw is not None else None
    if need > 100:
        return f"needs {need:.0f}% of the GEMM ceiling: beyond it"
    if need_bw is not None and need_bw > 100:
        return f"needs {need_bw:.0f}% of the {level} copy bandwidth: beyond it"
    peer = pct_ceil * ratio
    if peer > pct_ceil:
        return f"within both roofs; the peer's kernels reach {peer:.0f}% of the ceiling, cconv's {pct_ceil:.0f}%"
    return "within both roofs"


def headline(cases: dict) -> list[tuple]:
    """(what, T, geomean, number of cases, target) for every geometric mean
    with a target."""
    rows = []
    threads = sorted({k[3] for k in cases})
    for t in threads:
        for which, peer, target in (("forward", "torch", FWD_GEOMEAN), ("forward", "ort", FWD_GEOMEAN),
                                    ("backward", "torch", BWD_GEOMEAN)):
            v = [e[peer] for k, e in cases.items() if k[0] == "float32" and k[1] == which and k[3] == t]
            v = [x for x in v if x is not None]
            if v:
                rows.append((f"float32 {'forward' if which == 'forward' else 'fwd+bwd'}, cconv / {peer}",
                             t, gmean(v), len(v), target))
    return rows


def _pct(v):
    return "-" if v is None else f"{v:.0f}%"


def _ratio(v, rng):
    if v is None:
        return "-"
    if rng and rng[0] != rng[1]:
        return f"{v:.2f} [{rng[0]:.2f}-{rng[1]:.2f}]"
    return f"{v:.2f}"


def _size(n):
    if n is None:
        return "-"
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


def report(runs: list[dict], show_cases: bool = False) -> str:
    cases, ceil, roofs = combine(runs)
    nruns: dict = {}
    for r in runs:
        nruns[r["dtype"]] = nruns.get(r["dtype"], 0) + 1
    lines = ["runs: " + ", ".join(f"{n} {d}" for d, n in sorted(nruns.items()))]
    for (d, t), v in sorted(ceil.items()):
        lv = roofs.get((d, t), {})
        lines.append(f"{d} T={t}: GEMM ceiling {v:.1f} GFLOP/s; copy bandwidth "
                     + ", ".join(f"{k} {b:.1f} GB/s" + (f" (up to {_size(h)})" if h else "")
                                 for k, (h, b) in sorted(lv.items(), key=lambda kv: ("L2", "L3", "DRAM").index(kv[0])))
                     )
    lines += ["", "| geometric mean | T | value | cases | target | |", "|---|---|---|---|---|---|"]
    for what, t, g, n, target in headline(cases):
        lines.append(f"| {what} | {t} | {g:.2f} | {n} | <= {target} | {'met' if g <= target else 'missed'} |")
    m = misses(cases)
    lines += ["", f"Cases that miss their target: {len(m)}", ""]
    if m:
        lines += ["| dtype | set | case | T | backend | peer | ratio (median [runs]) | target | "
                  "cconv % ceil | peer % ceil | target needs % ceil | bytes | roof | % copy | "
                  "target needs % copy | why |",
                  "|" + "---|" * 16]
        for x in m:
            lines.append(
                f"| {x['dtype']} | {x['set']} | {x['case']} | {x['T']} | {x['backend']} | {x['peer']} | "
                f"{_ratio(x['ratio'], x['range'])} | {x['target']} | {_pct(x['pct_ceil'])} | "
                f"{_pct(x['peer_pct_ceil'])} | {_pct(x['need_pct_ceil'])} | {_size(x['bytes'])} | "
                f"{x['level'] or '-'} | {_pct(x['pct_bw'])} | {_pct(x['need_pct_bw'])} | {x['verdict']} |")
    if show_cases:
        lines += ["", "| dtype | set | case | T | backend | cconv / torch | cconv / ort | GFLOP/s | % ceil | "
                  "bytes | roof | % copy |", "|" + "---|" * 12]
        for (d, which, name, t), e in _ordered(cases):
            lines.append(f"| {d} | {which} | {name} | {t} | {e['backend']} | "
                         f"{_ratio(e['torch'], e['torch_range'])} | {_ratio(e['ort'], e['ort_range'])} | "
                         f"{e['gf']:.1f} | {_pct(e['pct_ceil'])} | {_size(e['bytes'])} | {e['level'] or '-'} | "
                         f"{_pct(e['pct_bw'])} |")
    return "\n".join(lines)


def wide_table(runs: list[dict], dtype: str = "float32") -> str:
    """One row per case: its forward method, the median ratios forward to
    torch and to ONNX Runtime and forward + backward to torch at each thread
    count, and the forward GFLOP/s at the lowest count."""
    cases, _, _ = combine(runs)
    threads = sorted({k[3] for k in cases if k[0] == dtype})
    names = []
    for k in cases:
        if k[0] == dtype and k[2] not in names:
            names.append(k[2])
    order = {n: i for i, n in enumerate(KNOWN)}
    names.sort(key=lambda n: order.get(n, len(order)))
    ts = " / ".join(f"{t}T" for t in threads)
    head = (f"| case | forward method | fwd / torch {ts} | fwd / ORT {ts} | fwd GFLOP/s {threads[0]}T | "
            f"fwd+bwd / torch {ts} |" if threads else "| case |")
    lines = [head, "|" + "---|" * 6]

    def cell(which, peer):
        v = [cases.get((dtype, which, n, t), {}).get(peer) for t in threads]
        return " / ".join("-" if x is None else f"{x:.2f}" for x in v)
    for n in names:
        fw = [cases.get((dtype, "forward", n, t)) for t in threads]
        meth = sorted({e["backend"] for e in fw if e})
        gf = fw[0]["gf"] if fw and fw[0] else None
        lines.append(f"| {n} | {' / '.join(meth) or '-'} | {cell('forward', 'torch')} | "
                     f"{cell('forward', 'ort')} | {'-' if gf is None else f'{gf:.0f}'} | "
                     f"{cell('backward', 'torch')} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="compare.py markdown outputs (or results files holding them)")
    ap.add_argument("--cases", action="store_true", help="also list every case's medians")
    ap.add_argument("--wide", action="store_true",
                    help="also one row per case: forward vs torch and ORT, forward + backward, per thread count")
    ap.add_argument("--out", default=None, metavar="FILE", help="also write the report to FILE")
    args = ap.parse_args(argv)
    runs = []
    for f in args.files:
        try:
            with open(f) as fh:
                got = parse(fh.read())
        except OSError as e:
            ap.error(f"cannot read {f}: {e.strerror}")
        if not got:
            ap.error(f"{f}: no compare.py table found (a 'machine:' line, then its '| set |' table)")
        runs += got
    text = report(runs, args.cases)
    if args.wide:
        for d in sorted({r["dtype"] for r in runs}):
            text += f"\n\n{d}, per case (median of the runs' ratios, cconv / peer):\n\n" + wide_table(runs, d)
    try:
        print(text)
    except BrokenPipeError:      # `| head`: the reader has what it wanted
        sys.stderr.close()
        return 0
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
