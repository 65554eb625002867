"""Predicted throughput of the implicit GEMM's micro-kernels on CPUs this
machine is not, by llvm-mca.

Each instruction set's kernel file (src/igemm/ig_kernels.c) is compiled to
assembly with the build's flags for that set, the innermost loop of each
kernel named below (the one with the most FMAs) is cut out, and llvm-mca
simulates it on the CPU models given.  Printed per kernel and CPU: the
loop's FMAs, llvm-mca's block reciprocal throughput (cycles per iteration),
the predicted FMAs per cycle, and that as a fraction of the model's two FMA
pipes.  A prediction of the loop alone, in steady state, with every load
in L1: what the kernel's schedule allows, not what a layer reaches.

    python benches/mca_kernels.py [--mca llvm-mca] [--markdown]

Needs gcc and llvm-mca (Debian: llvm).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

# instruction set -> (gcc flags, llvm-mca CPU models)
ISAS = {
    "avx512": (["-mavx512f", "-mfma", "-DCC_ISA=avx512", "-DCC_ISA_IS_AVX512"],
               ["sapphirerapids", "icelake-server", "skylake-avx512"]),
    "avx2": (["-mavx2", "-mfma", "-DCC_ISA=avx2", "-DCC_ISA_IS_AVX2"],
             ["znver3", "znver2", "skylake", "haswell"]),
}
KERNELS = {"ukr": "GEMM micro-kernel (packed B)", "ukri": "GEMM micro-kernel (band read in place)",
           "ukrw": "weight-gradient kernel"}


def compile_asm(isa: str, f64: bool, out: str) -> None:
    flags, _ = ISAS[isa]
    cmd = ["gcc", "-S", "-O3", "-std=c11", "-fPIC", "-D_GNU_SOURCE", "-DNDEBUG",
           "-DCC_BUILD_AVX2", "-DCC_BUILD_AVX512", "-I", SRC, "-I", os.path.join(SRC, "igemm"),
           *flags, *(["-DCC_F64"] if f64 else []), "-o", out,
           os.path.join(SRC, "igemm", "ig_kernels.c")]
    subprocess.run(cmd, check=True)


def function_body(asm: list[str], name: str) -> list[str]:
    start = next(i for i, ln in enumerate(asm) if ln.startswith(name + ":"))
    end = next(i for i in range(start, len(asm)) if asm[i].strip().startswith(".size"))
    return asm[start:end]


def hottest_loop(body: list[str]) -> list[str]:
    """The backward-branching loop (label .. jump to it) with the most FMAs."""
    labels = {ln.strip()[:-1]: i for i, ln in enumerate(body) if re.match(r"^\.L\w+:$", ln.strip())}
    best, best_n = None, -1
    for j, ln in enumerate(body):
        m = re.match(r"^\s*j\w+\s+(\.L\w+)\s*$", ln)
        if m and m.group(1) in labels and labels[m.group(1)] < j:
            seg = body[labels[m.group(1)] + 1:j + 1]
            n = sum("vfmadd" in s for s in seg)
            if n > best_n or (n == best_n and best is not None and len(seg) < len(best)):
                best, best_n = seg, n
    insns = [s for s in (best or []) if s.strip() and not s.strip().startswith(".")
             and not re.match(r"^\.L\w+:$", s.strip())]
    return insns


def mca(mcabin: str, cpu: str, insns: list[str]) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(insns) + "\n")
        path = f.name
    try:
        r = subprocess.run([mcabin, f"-mcpu={cpu}", "-iterations=300", path],
                           capture_output=True, text=True, check=True)
    finally:
        os.unlink(path)
    m = re.search(r"Block RThroughput:\s*([\d.]+)", r.stdout)
    return float(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mca", default=shutil.which("llvm-mca") or "llvm-mca-14")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    ver = subprocess.run([a.mca, "--version"], capture_output=True, text=True).stdout
    print(f"llvm-mca: {' '.join(ver.split()[:4]) if ver else a.mca}", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        for isa, (_, cpus) in ISAS.items():
            for f64 in (False, True):
                dt = "f64" if f64 else "f32"
                s = os.path.join(td, f"{isa}_{dt}.s")
                compile_asm(isa, f64, s)
                asm = open(s).read().splitlines()
                for k, what in KERNELS.items():
                    insns = hottest_loop(function_body(asm, f"cc_ig_{k}_{dt}_{isa}"))
                    nfma = sum("vfmadd" in s for s in insns)
                    for cpu in cpus:
                        rt = mca(a.mca, cpu, insns)
                        rows.append((isa, dt, k, what, cpu, len(insns), nfma, rt, nfma / rt))
    if a.markdown:
        print("| ISA | dtype | kernel | CPU model | loop insns | FMAs | cycles/iter | FMA/cycle | of 2 pipes |")
        print("|---|---|---|---|---|---|---|---|---|")
        for isa, dt, k, what, cpu, n, nf, rt, fpc in rows:
            print(f"| {isa} | {dt} | {k} | {cpu} | {n} | {nf} | {rt:.2f} | {fpc:.2f} | {fpc / 2:.0%} |")
    else:
        for isa, dt, k, what, cpu, n, nf, rt, fpc in rows:
            print(f"{isa:7s} {dt} {k:5s} {cpu:15s} insns {n:3d} fma {nf:3d} "
                  f"cycles {rt:6.2f} fma/cycle {fpc:4.2f} ({fpc / 2:.0%})")


if __name__ == "__main__":
    main()
