"""The C test programs of tests/c, built by meson from this checkout and run
by the kernel test files: natively, with the AVX-512 kernels on SIMDe's
portable AVX-512, under AddressSanitizer and UBSan, and cross-compiled for
aarch64 and run under qemu.

Each mode is a kernels-only meson build (``-Dkernels_only=true``: the
kernel families and tests/c, no Python, Cython or OpenBLAS) in
``build/c-<mode>`` under the repository root, made on first use and brought
up to date by meson afterwards: the programs link the same libraries, built
with the same flags, as the package's core (src/meson.build,
tests/c/meson.build).  ``meson test -C build/c-<mode>`` runs the same
programs by hand."""
from __future__ import annotations

import functools
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CDIR = ROOT / "tests" / "c"
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"

# meson setup arguments of each mode, after -Dkernels_only=true
MODE_ARGS = {
    "native": [],
    # (logic checks of the AVX-512 kernels on SIMDe: the whole build at -Og,
    # which compiles in a fraction of the time of -O3 and of the SIMDe
    # kernels' -O1; src/meson.build)
    "simde": ["-Dsimde_avx512=true", "-Doptimization=g"],
    # -g for readable reports; UBSan stops at the first error
    "asan": ["-Db_sanitize=address,undefined", "-Db_lundef=false",
             "-Dc_args=-g -fno-sanitize-recover=all"],
    "aarch64": ["--cross-file", str(CDIR / "cross" / "aarch64-linux-gnu.ini")],
}


def _env() -> dict:
    """The environment for meson: the running Python's scripts directory (a
    virtual environment's bin, where pip puts meson and ninja) first on PATH."""
    bindir = os.path.dirname(sys.executable)
    return dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))


def _meson() -> list | None:
    """The command that runs meson, or None."""
    try:
        import mesonbuild  # noqa: F401
        return [sys.executable, "-m", "mesonbuild.mesonmain"]
    except ImportError:
        exe = shutil.which("meson", path=_env()["PATH"])
        return [exe] if exe else None


@functools.lru_cache(maxsize=None)
def _tools_missing() -> str | None:
    if _meson() is None:
        return "meson absent (pip install meson; the 'test' extra has it)"
    path = _env()["PATH"]
    if not any(shutil.which(n, path=path) for n in ("ninja", "samu")):
        return "ninja absent (pip install ninja; the 'test' extra has it)"
    if shutil.which(os.environ.get("CC", "gcc")) is None:
        return "no C compiler (gcc) to build tests/c"
    return None


@functools.lru_cache(maxsize=None)
def _asan_missing() -> str | None:
    r = subprocess.run([os.environ.get("CC", "gcc"), "-fsanitize=address,undefined", "-x", "c", "-",
                        "-o", os.devnull], input="int main(void){return 0;}",
                       capture_output=True, text=True)
    return None if r.returncode == 0 else "the C compiler cannot link -fsanitize=address,undefined"


def missing(mode: str, module_isas=()) -> str | None:
    """Why the C programs cannot be built and run in ``mode`` here, or None
    (``module_isas``: a kernel module's available_isas(), for "simde")."""
    why = _tools_missing()
    if why:
        return why
    if mode == "asan":
        return _asan_missing()
    if mode == "simde":
        if not pathlib.Path("/usr/include/simde/x86/avx512.h").exists():
            return "SIMDe headers absent (Debian: apt-get install libsimde-dev)"
        if "avx2" not in module_isas:
            return "the SIMDe build of the AVX-512 kernels needs an AVX2 CPU"
    if mode == "aarch64":
        if shutil.which("aarch64-linux-gnu-gcc") is None:
            return "cross compiler aarch64-linux-gnu-gcc absent (Debian: gcc-aarch64-linux-gnu)"
        if shutil.which("qemu-aarch64") is None:
            return "qemu-aarch64 absent (Debian: qemu-user)"
        if not pathlib.Path(AARCH64_SYSROOT).is_dir():
            return f"aarch64 sysroot {AARCH64_SYSROOT} absent (Debian: libc6-dev-arm64-cross)"
    return None


def _meson_run(args: list, what: str) -> None:
    r = subprocess.run(_meson() + args, capture_output=True, text=True, timeout=3600, env=_env())
    assert r.returncode == 0, f"{what} failed:\n{r.stdout[-6000:]}\n{r.stderr[-4000:]}"


def build(program: str, mode: str) -> pathlib.Path:
    """tests/c/<program> built for ``mode``: the path of the executable."""
    bdir = ROOT / "build" / f"c-{mode}"
    if not (bdir / "build.ninja").exists():
        shutil.rmtree(bdir, ignore_errors=True)
        _meson_run(["setup", str(bdir), str(ROOT), "-Dkernels_only=true"] + MODE_ARGS[mode],
                   f"meson setup of the {mode} build")
    args = ["compile", "-C", str(bdir), program]
    r = subprocess.run(_meson() + args, capture_output=True, text=True, timeout=3600, env=_env())
    if r.returncode != 0 and "target not found" in r.stdout + r.stderr:
        # a program added to tests/c/meson.build since the build was set up
        _meson_run(["setup", "--reconfigure", str(bdir), str(ROOT)],
                   f"meson reconfigure of the {mode} build")
    _meson_run(args, f"building {program} ({mode})")
    return bdir / "tests" / "c" / program


def run_check(cmd) -> str:
    """Run a check program; it must exit 0 and report ' 0 failures'.  Its stdout."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout}\n{r.stderr[-4000:]}"
    assert " 0 failures" in r.stdout, r.stdout
    return r.stdout


def run(program: str, mode: str, *args: str) -> str:
    """Build tests/c/<program> for ``mode`` and run it with ``args`` (under
    qemu for aarch64); it must pass.  Its stdout."""
    exe = build(program, mode)
    prefix = ["qemu-aarch64", "-L", AARCH64_SYSROOT] if mode == "aarch64" else []
    return run_check(prefix + [str(exe)] + list(args))


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
