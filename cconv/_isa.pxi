# The instruction-set functions every extension module with per-ISA kernels
# includes (src/core/isa.h).  The modules share one C core library, hence one
# choice: CCONV_SIMD sets it at import, and set_isa from any module switches
# every kernel family (for tests; not while kernels run).
import os as _os
import warnings as _warnings

cdef extern from "core/isa.h" nogil:
    const char *cc_isa_name(int isa)
    int cc_isa_lookup(const char *name)
    int cc_isa_runs_here(int isa)
    int cc_isa_emulated(int isa)
    int cc_isa_init()
    int cc_isa_current()
    int cc_isa_set(const char *name)
    int CC_ISA_COUNT

# every instruction set cconv has kernels for, as src/core/isa.c names them
ISAS = tuple(cc_isa_name(i).decode() for i in range(CC_ISA_COUNT))


def isa():
    """The instruction set the C core's kernels use."""
    return cc_isa_name(cc_isa_current()).decode()


def available_isas():
    """The instruction sets this build and CPU can run, best last."""
    return [n for n in ISAS if cc_isa_runs_here(cc_isa_lookup(n.encode()))]


def emulated_isas():
    """The instruction sets whose kernels this build compiles on a narrower
    one: ['avx512'] in the SIMDe test build (meson -Dsimde_avx512=true, the
    AVX-512 kernels on SIMDe's portable AVX-512 over AVX2), else []."""
    return [n for n in ISAS if cc_isa_emulated(cc_isa_lookup(n.encode()))]


def set_isa(name=None):
    """Force the C core's instruction set, for every kernel family (None or
    'auto': the best available); returns the previous one.  ValueError when
    it cannot run here."""
    prev = isa()
    cdef bytes b = b"auto" if name is None else str(name).encode()
    if cc_isa_set(b) != 0:
        raise ValueError(
            f"set_isa: {name!r} cannot run here; available: {', '.join(available_isas())}")
    from cconv import _dispatch  # (cached default choices: some rules read the vector width)
    _dispatch.forget_choices()
    return prev


# The same text from every module, so the warnings filter shows it once.
if cc_isa_init() != 0:
    _warnings.warn(
        f"CCONV_SIMD={_os.environ.get('CCONV_SIMD')!r} is unknown or cannot run here "
        f"(available: {', '.join(available_isas())}); cconv's kernels use {isa()!r}",
        RuntimeWarning, stacklevel=2)
