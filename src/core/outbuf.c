/* The cache of freed result blocks: see outbuf.h. */
#include "outbuf.h"

#include <stdlib.h>
#include <string.h>

/* The system allocator and the lock.  POSIX: posix_memalign and a pthread
 * mutex, held across fork() by an atfork handler so that a child never
 * starts with it locked by a thread it does not have.  Elsewhere (Windows)
 * nothing is cached: every block goes straight back to the system. */
#if defined(_WIN32)
#include <malloc.h>
#define OB_CACHING 0
static void *ob_sys_alloc(size_t n) { return _aligned_malloc(n, 64); }
static void ob_sys_free(void *p) { _aligned_free(p); }
static void ob_lock_(void) {}
static void ob_unlock_(void) {}
#else
#include <pthread.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#define OB_CACHING 1
static pthread_mutex_t ob_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t ob_once = PTHREAD_ONCE_INIT;
static void ob_atfork_prepare(void) { pthread_mutex_lock(&ob_lock); }
static void ob_atfork_release(void) { pthread_mutex_unlock(&ob_lock); }
static void ob_init(void) { pthread_atfork(ob_atfork_prepare, ob_atfork_release, ob_atfork_release); }
/* Blocks of OB_HUGE_MIN bytes or more start on a 2 MiB boundary and are
 * offered to transparent huge pages (where the kernel's setting is
 * 'madvise', as NumPy does for its own large arrays): their first touch
 * then faults once per 2 MiB instead of once per 4 KiB. */
#define OB_HUGE_MIN ((size_t)4 << 20)
static void *ob_sys_alloc(size_t n) {
    void *p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n >= OB_HUGE_MIN) {
        if (posix_memalign(&p, (size_t)2 << 20, n) != 0) return NULL;
        (void)madvise(p, n, MADV_HUGEPAGE); /* advice: a refusal changes nothing */
        return p;
    }
#endif
    return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}
static void ob_sys_free(void *p) { free(p); }
static void ob_lock_(void) {
    pthread_once(&ob_once, ob_init);
    pthread_mutex_lock(&ob_lock);
}
static void ob_unlock_(void) { pthread_mutex_unlock(&ob_lock); }
#endif

/* Every block carries a 64-byte header in front of what the caller sees:
 * its usable size, so that free and realloc need no size from the caller. */
#define OB_HEAD 64

typedef struct ob_slot {
    void *base;     /* start of the block (header), NULL when free */
    size_t size;    /* usable bytes */
    uint64_t stamp; /* when it was cached: the oldest is evicted first */
} ob_slot;

static ob_slot ob_slots[CC_OUTBUF_SLOTS];
static size_t ob_bytes;
static uint64_t ob_clock;

static inline size_t ob_size_of(void *user) { return *(size_t *)((char *)user - OB_HEAD); }

static void *ob_fresh(size_t n) {
    if (n > SIZE_MAX - OB_HEAD) return NULL;
    void *base = ob_sys_alloc(OB_HEAD + (n ? n : 1));
    if (!base) return NULL;
    *(size_t *)base = n;
    return (char *)base + OB_HEAD;
}

/* Whether a block of n usable bytes is kept in the cache when freed. */
static inline int ob_cacheable(size_t n) {
    return OB_CACHING && n >= CC_OUTBUF_MIN_BYTES && n <= CC_OUTBUF_MAX_BYTES;
}

/* Take the smallest cached block of size in [n, n * 4/3], if any. */
static void *ob_take(size_t n) {
    void *got = NULL;
    if (!ob_cacheable(n)) return NULL;
    ob_lock_();
    int best = -1;
    for (int i = 0; i < CC_OUTBUF_SLOTS; ++i) {
        const ob_slot *s = &ob_slots[i];
        if (s->base && s->size >= n && s->size / 4 * 3 <= n &&
            (best < 0 || s->size < ob_slots[best].size))
            best = i;
    }
    if (best >= 0) {
        got = (char *)ob_slots[best].base + OB_HEAD;
        ob_bytes -= ob_slots[best].size;
        ob_slots[best].base = NULL;
    }
    ob_unlock_();
    return got;
}

void *cc_outbuf_alloc(size_t n, int zero) {
    void *p = ob_take(n);
    if (!p) p = ob_fresh(n);
    if (p && zero) memset(p, 0, n);
    return p;
}

void cc_outbuf_free(void *p) {
    if (!p) return;
    const size_t n = ob_size_of(p);
    void *base = (char *)p - OB_HEAD;
    if (!ob_cacheable(n)) {
        ob_sys_free(base);
        return;
    }
    void *evicted[CC_OUTBUF_SLOTS];
    int nev = 0;
    ob_lock_();
    /* make room: the oldest blocks go until this one fits the cap and a slot */
    for (;;) {
        int empty = -1, oldest = -1;
        for (int i = 0; i < CC_OUTBUF_SLOTS; ++i) {
            if (!ob_slots[i].base) {
                if (empty < 0) empty = i;
            } else if (oldest < 0 || ob_slots[i].stamp < ob_slots[oldest].stamp) {
                oldest = i;
            }
        }
        if (empty >= 0 && ob_bytes + n <= CC_OUTBUF_CAP_BYTES) {
            ob_slots[empty].base = base;
            ob_slots[empty].size = n;
            ob_slots[empty].stamp = ++ob_clock;
            ob_bytes += n;
            base = NULL;
            break;
        }
        if (oldest < 0) break; /* (cannot happen: n <= max <= cap) */
        evicted[nev++] = ob_slots[oldest].base;
        ob_bytes -= ob_slots[oldest].size;
        ob_slots[oldest].base = NULL;
    }
    ob_unlock_();
    for (int i = 0; i < nev; ++i) ob_sys_free(evicted[i]); /* outside the lock */
    if (base) ob_sys_free(base);                            /* NULL when cached */
}

void *cc_outbuf_realloc(void *p, size_t n) {
    if (!p) return cc_outbuf_alloc(n, 0);
    const size_t old = ob_size_of(p);
    if (n <= old && n >= old / 2) return p; /* fits, and not much too big */
    void *q = cc_outbuf_alloc(n, 0);
    if (!q) return NULL;
    memcpy(q, p, old < n ? old : n);
    cc_outbuf_free(p);
    return q;
}

void cc_outbuf_release(void) {
    void *all[CC_OUTBUF_SLOTS];
    int n = 0;
    ob_lock_();
    for (int i = 0; i < CC_OUTBUF_SLOTS; ++i)
        if (ob_slots[i].base) {
            all[n++] = ob_slots[i].base;
            ob_slots[i].base = NULL;
        }
    ob_bytes = 0;
    ob_unlock_();
    for (int i = 0; i < n; ++i) ob_sys_free(all[i]);
}

void cc_outbuf_stats(int64_t *bytes, int64_t *blocks) {
    int64_t nb = 0;
    ob_lock_();
    for (int i = 0; i < CC_OUTBUF_SLOTS; ++i) nb += ob_slots[i].base != NULL;
    *bytes = (int64_t)ob_bytes;
    ob_unlock_();
    *blocks = nb;
}
