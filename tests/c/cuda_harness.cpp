/*
 * Runs cconv's CUDA kernels (the .cu files in cconv/cuda) on the CPU, so the
 * tests can check their index arithmetic without a GPU
 * (tests/test_cuda_sources.py, tests/test_cuda_emulated.py).
 *
 * The CUDA keywords become plain C++: __global__ and __device__ vanish,
 * blockIdx / threadIdx / blockDim / gridDim are globals that the launcher
 * sets, and a launch runs every thread of every block one after the other.
 * That is exact for cconv's kernels, which are grid-stride loops with
 * independent iterations (no shared memory, no __syncthreads, no atomics:
 * see cc_common.cuh).
 *
 * Build (the test does it):  g++ -std=c++17 -O1 -shared -fPIC
 *     -I <cconv/cuda> tests/c/cuda_harness.cpp -o cuda_harness.so
 *
 * cc_harness_launch(fn, nargs, args, grid, block) calls the kernel `fn`
 * (its address, from the .so's symbol of the same name) with nargs 64-bit
 * arguments.  Every kernel argument is a pointer or a long long, which the
 * x86-64 and AArch64 calling conventions pass exactly like uint64_t, so the
 * kernel is called through a pointer to void(uint64_t, ...).
 */
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

struct cc_dim3 {
    unsigned int x, y, z;
};
static cc_dim3 blockIdx, threadIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)

#include "cc_common.cuh"
#include "im2col.cu"
#include "depthwise.cu"
#include "reduce.cu"

namespace {
using u64 = std::uint64_t;
using caller = void (*)(void *, const u64 *);

template <std::size_t I>
using u64_of = u64;

template <std::size_t... I>
void call_with(void *fn, const u64 *a, std::index_sequence<I...>) {
    using F = void (*)(u64_of<I>...);
    reinterpret_cast<F>(fn)(a[I]...);
}

template <std::size_t N>
void call_n(void *fn, const u64 *a) {
    call_with(fn, a, std::make_index_sequence<N>{});
}

constexpr std::size_t kMaxArgs = 48;

template <std::size_t... N>
constexpr std::array<caller, sizeof...(N)> make_table(std::index_sequence<N...>) {
    return {{&call_n<N>...}};
}

constexpr auto kCallers = make_table(std::make_index_sequence<kMaxArgs + 1>{});
}  // namespace

extern "C" int cc_harness_max_args(void) { return (int)kMaxArgs; }

/* 0 on success, -1 when nargs is out of range. */
extern "C" int cc_harness_launch(void *fn, int nargs, const u64 *args, unsigned grid,
                                 unsigned block) {
    if (nargs < 0 || (std::size_t)nargs > kMaxArgs || grid == 0 || block == 0) return -1;
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
        for (unsigned t = 0; t < block; ++t) {
            blockIdx = {b, 0, 0};
            threadIdx = {t, 0, 0};
            kCallers[(std::size_t)nargs](fn, args);
        }
    }
    return 0;
}
