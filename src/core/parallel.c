/* Thread counts, work splits and the SIGINT watch: see parallel.h. */
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sched.h>
#endif
#if !defined(_WIN32)
#include <unistd.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

static int cc_count_cpus(void) {
    int n = 0;
#if defined(__linux__) && defined(CPU_COUNT)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
#endif
#if !defined(_WIN32) && defined(_SC_NPROCESSORS_ONLN)
    if (n < 1) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
#ifdef _OPENMP
    if (n < 1) n = omp_get_num_procs();
#endif
    return n < 1 ? 1 : n;
}

/* Read once per process (and per copy of the core: each extension module
 * links its own), then fixed: the splits of every later call depend on it. */
int cc_cpus(void) {
    static int cached; /* 0: not read yet; every thread reads the same value */
    int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (n < 1) {
        n = cc_count_cpus();
        __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
    }
    return n;
}

int cc_thread_cap(void) { return 4 * cc_cpus(); }

/* CCONV_GRAIN_SCALE (a number >= 0, default 1) multiplies every grain: 0
 * splits every call as a large one and runs it on all the threads asked for
 * (the tests use it to run the threaded paths on small problems; the
 * threshold measurements to time other grains).  Read once. */
double cc_grain_scale(void) {
    static double cached = -1.0;
    double s;
    __atomic_load(&cached, &s, __ATOMIC_RELAXED);
    if (s < 0) {
        const char *e = getenv("CCONV_GRAIN_SCALE");
        char *end = NULL;
        s = e && *e ? strtod(e, &end) : 1.0;
        if (!(s >= 0 && s < 1e12) || (end && *end)) s = 1.0;
        __atomic_store(&cached, &s, __ATOMIC_RELAXED);
    }
    return s;
}

int cc_split_threads(void) {
    const int n = cc_cpus();
    return n > 64 ? 64 : n;
}

int64_t cc_items_wanted(double work, double grain) {
    grain *= cc_grain_scale();
    const double want = 2.0 * (double)cc_split_threads();
    const double by_work = grain > 0 ? work / grain : want;
    const double n = by_work < want ? by_work : want;
    return n >= 1.0 ? (int64_t)n : 1;
}

static _Thread_local int cc_pool_here;

int cc_threads_for(double work, double grain, int64_t items, int nthreads) {
    int64_t nt = nthreads < 1 ? 1 : nthreads;
    const int cap = cc_thread_cap();
    grain *= cc_grain_scale();
    if (nt > cap) nt = cap;
    if (nt > items) nt = items;
    if (grain > 0 && (double)nt * grain > work) {
        const double by_work = work / grain;
        nt = by_work >= 1.0 ? (int64_t)by_work : 1;
    }
    if (nt < 1) nt = 1;
    if (nt > 1) cc_pool_here = 1;
    return (int)nt;
}

int cc_pool_started(void) { return cc_pool_here; }

double cc_geom_macs(const cc_geom *g) {
    if (!g || g->groups < 1) return 0.0;
    double m = (double)g->batch * (double)g->c_out * (double)(g->c_in / g->groups);
    for (int d = 0; d < 3; ++d) m *= (double)g->out[d] * (double)g->k[d];
    return m > 0 ? m : 0.0;
}

/* ---- SIGINT watch ----------------------------------------------------------
 * The one piece of signal state of the core: the flag the handler sets and
 * the action it replaced, both touched only by the thread that handles
 * signals (holding the interpreter's lock) and by the handler itself. */
static volatile sig_atomic_t cc_sigint_seen;
static const volatile sig_atomic_t cc_never = 0;
static _Thread_local int cc_watching;

cc_stop_t cc_stop_flag(void) { return cc_watching ? &cc_sigint_seen : &cc_never; }

#if defined(_WIN32)
int cc_watch_begin(void) { return 0; }
int cc_watch_end(int token) {
    (void)token;
    return 0;
}
#else
static struct sigaction cc_prev;
static int cc_installed;

static void cc_on_sigint(int sig, siginfo_t *info, void *ctx) {
    cc_sigint_seen = 1;
    /* pass it on: Python's handler marks the signal for the interpreter */
    if (cc_prev.sa_flags & SA_SIGINFO) {
        if (cc_prev.sa_sigaction) cc_prev.sa_sigaction(sig, info, ctx);
    } else if (cc_prev.sa_handler != SIG_DFL && cc_prev.sa_handler != SIG_IGN) {
        cc_prev.sa_handler(sig);
    }
}

int cc_watch_begin(void) {
    if (cc_installed) return 0;
    struct sigaction cur, act;
    if (sigaction(SIGINT, NULL, &cur) != 0) return 0;
    if (cur.sa_flags & SA_SIGINFO) {
        if (cur.sa_sigaction == cc_on_sigint || !cur.sa_sigaction) return 0;
    } else if (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN) {
        return 0; /* the default (terminate) or ignored: left as it is */
    }
    memset(&act, 0, sizeof(act));
    act.sa_sigaction = cc_on_sigint;
    act.sa_mask = cur.sa_mask;
    act.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_ONSTACK);
    cc_prev = cur;
    cc_sigint_seen = 0;
    if (sigaction(SIGINT, &act, NULL) != 0) return 0;
    cc_installed = 1;
    cc_watching = 1;
    return 1;
}

int cc_watch_end(int token) {
    if (!token) return 0;
    sigaction(SIGINT, &cc_prev, NULL);
    cc_installed = 0;
    cc_watching = 0;
    const int seen = cc_sigint_seen != 0;
    cc_sigint_seen = 0;
    return seen;
}
#endif
