"""Building and running the C test programs of tests/c (native, AVX-512 on
SIMDe, aarch64 under qemu): shared by the kernel test files."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

CDIR = pathlib.Path(__file__).resolve().parent / "c"


def build(script: str, mode: str, out, env: dict | None = None) -> None:
    """Run tests/c/<script> MODE OUT; fail the test with its output if it fails."""
    r = subprocess.run(["sh", str(CDIR / script), mode, str(out)], capture_output=True, text=True,
                       timeout=600, env=None if env is None else dict(os.environ, **env))
    assert r.returncode == 0, f"{script} {mode} failed:\n{r.stdout}\n{r.stderr}"


def run_check(cmd) -> str:
    """Run a check program; it must exit 0 and report ' 0 failures'.  Its stdout."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout}\n{r.stderr[-4000:]}"
    assert " 0 failures" in r.stdout, r.stdout
    return r.stdout


def cc_missing(program: str) -> str | None:
    """Why ``program`` (a tests/c file) cannot be built here, or None."""
    if shutil.which(os.environ.get("CC", "gcc")) is None:
        return f"no C compiler (gcc) to build tests/c/{program}"
    return None


def asan_missing(program: str) -> str | None:
    """Why ``program`` cannot be built with AddressSanitizer here, or None."""
    why = cc_missing(program)
    if why:
        return why
    r = subprocess.run([os.environ.get("CC", "gcc"), "-fsanitize=address", "-x", "c", "-",
                        "-o", os.devnull], input="int main(void){return 0;}",
                       capture_output=True, text=True)
    return None if r.returncode == 0 else "the C compiler cannot link -fsanitize=address"


def simde_missing(program: str, module_isas) -> str | None:
    """Why ``program``'s AVX-512 kernels cannot be built on SIMDe's portable
    AVX-512 and run here, or None (``module_isas``: the kernel module's
    available_isas())."""
    why = cc_missing(program)
    if why:
        return why
    if not pathlib.Path("/usr/include/simde/x86/avx512.h").exists():
        return "SIMDe headers absent (Debian: apt-get install libsimde-dev)"
    if "avx2" not in module_isas:
        return "the SIMDe build of the AVX-512 kernel needs an AVX2 CPU"
    return None


def neon_missing() -> str | None:
    """Why the aarch64 cross build cannot run under qemu here, or None."""
    if shutil.which("aarch64-linux-gnu-gcc") is None:
        return "cross compiler aarch64-linux-gnu-gcc absent (Debian: gcc-aarch64-linux-gnu)"
    if shutil.which("qemu-aarch64") is None:
        return "qemu-aarch64 absent (Debian: qemu-user)"
    if not pathlib.Path("/usr/aarch64-linux-gnu").is_dir():
        return "aarch64 sysroot /usr/aarch64-linux-gnu absent"
    return None


def cpu_isas(module_isas) -> list:
    """The instruction sets of ``module_isas`` (a kernel module's
    available_isas()) that this CPU itself runs: in the SIMDe test build
    (meson -Dsimde_avx512=true) the module offers 'avx512' on a CPU without
    AVX-512, and a natively compiled C check cannot run it."""
    simde = simde_build(module_isas)
    return [i for i in module_isas if not (simde and i == "avx512")]


def simde_build(module_isas) -> bool:
    """Whether the kernel module is the SIMDe test build (see cpu_isas)."""
    return "avx512" in module_isas and not cpu_has("avx512f")


def cpu_has(flag: str) -> bool:
    """Whether /proc/cpuinfo lists ``flag`` (True where it cannot be read:
    the module's own CPU check is then trusted)."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return True
    for line in text.splitlines():
        if line.startswith("flags"):
            return flag in line.split(":", 1)[1].split()
    return True
