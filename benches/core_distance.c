/*
 * How far apart two CPUs are: one way of a cache line passed back and forth
 * between a thread pinned to each (a counter one thread bumps from odd to
 * even and the other from even to odd), in nanoseconds.  Two cores that
 * share a cache answer in tens of nanoseconds; cores on different dies or
 * sockets in one to two hundred, and then every output block or buffer the
 * threads hand to each other costs that much a line (docs/internals.md,
 * "Threads, splits and interrupts").  A virtual machine's CPUs may move
 * between host cores while it runs, so measure around a benchmark, not
 * once.
 *
 *   cc -O2 -pthread benches/core_distance.c -o core_distance
 *   ./core_distance [cpu a] [cpu b] [round trips]     (default 0 1 1000000)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_long counter;
static long trips = 1000000;

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

/* Wait for the counter to reach `from`, set it to from + 1; every other
 * value from `first` on. */
static void bounce(long first)
{
    for (long v = first; v < 2 * trips; v += 2) {
        while (atomic_load_explicit(&counter, memory_order_acquire) != v)
            ;
        atomic_store_explicit(&counter, v + 1, memory_order_release);
    }
}

static void *other(void *arg)
{
    if (pin(*(int *)arg) != 0) {
        fprintf(stderr, "cannot run on cpu %d\n", *(int *)arg);
        exit(2);
    }
    bounce(1);
    return NULL;
}

int main(int argc, char **argv)
{
    int a = argc > 1 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    if (argc > 3)
        trips = atol(argv[3]);
    if (trips < 1 || pin(a) != 0) {
        fprintf(stderr, "usage: core_distance [cpu a] [cpu b] [round trips >= 1]\n");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, other, &b) != 0)
        return 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bounce(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("cpus %d and %d: %.1f ns one way\n", a, b, s / (2.0 * (double)trips) * 1e9);
    return 0;
}
