# Threads and interrupts (src/core/parallel.h), included by every kernel module
# after it cimports cc_geom.  Each module links its own copy of the C core,
# so each has its own SIGINT watch and its own record of started pools.
#
# A long call made on the main thread is bracketed by watch_begin /
# watch_end: SIGINT then stops the kernel's drivers between work items (the
# result is discarded), Python's handler runs at once (KeyboardInterrupt,
# as usual) and a handler that does not raise gets the call run again.
from cpython.exc cimport PyErr_CheckSignals

import threading as _threading

cdef extern from "core/parallel.h" nogil:
    int cc_cpus()
    int cc_thread_cap()
    int cc_split_threads()
    int cc_pool_started()
    double cc_grain_scale()
    double cc_geom_macs(const cc_geom *g)
    int cc_watch_begin()
    int cc_watch_end(int token)

# the least work (multiply-adds, or bytes for a copy) of a call that watches
# SIGINT: about a millisecond and up, where three signal-action calls (about
# 1 us) are noise
cdef double WATCH_MIN_WORK = 3.0e7


cdef inline int watch_begin(double work) except -1:
    """A token for watch_end: SIGINT watched for a call of ``work`` on the
    main thread (0: not watched)."""
    if work < WATCH_MIN_WORK:
        return 0
    if _threading.current_thread() is not _threading.main_thread():
        return 0
    return cc_watch_begin()


cdef inline int watch_end(int token) except -1:
    """0 when the call ran to its end; on SIGINT, Python's handler runs here
    (KeyboardInterrupt propagates), else 1: the call must run again."""
    if token == 0:
        return 0
    if cc_watch_end(token) == 0:
        return 0
    PyErr_CheckSignals()
    return 1


def pool_started():
    """True when this module's kernels started a team of several OpenMP
    threads from the calling thread (GNU OpenMP's pool of that thread does
    not survive fork())."""
    return cc_pool_started() != 0


def thread_cap():
    """The most threads a kernel starts (4 x the CPUs this process may use)."""
    return cc_thread_cap()


def split_threads():
    """The thread count every work split is planned for (the CPU count)."""
    return cc_split_threads()


def grain_scale():
    """CCONV_GRAIN_SCALE as the kernels read it (1: the measured grains)."""
    return cc_grain_scale()
