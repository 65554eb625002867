/* grad_bias: the sum of grad_output over batch and space, per channel.
 * float32 sums in double; each channel is one OpenMP work item and its sum
 * runs in a fixed order, so the result does not depend on the threads.
 * A row is summed in 8 interleaved double accumulators (combined in a fixed
 * order): one running sum is a chain of dependent adds, 4 cycles each, which
 * made the bias gradient of a 144x56x56 map (0.45 M values) take as long as
 * its whole weight gradient (~0.5 ms); 8 chains keep the adders busy. */
#include "cconv.h"
#include "core/parallel.h"

/* threads: no more than cc_threads_for allows (clamped, a grain of values
 * each); the channels left once SIGINT is seen are skipped */
static int cc_bias_threads(int64_t batch, int64_t channels, int64_t spatial, int nthreads) {
    return cc_threads_for((double)batch * (double)channels * (double)spatial, CC_GRAIN_SUM,
                          channels, nthreads);
}

void cc_bias_grad_f32(int64_t batch, int64_t channels, int64_t spatial,
                      const float *gy, float *gb, int nthreads) {
    const int nt = cc_bias_threads(batch, channels, spatial, nthreads);
    const cc_stop_t stop = cc_stop_flag();
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t c = 0; c < channels; ++c) {
        if (CC_STOPPED(stop)) continue;
        double s = 0.0;
        for (int64_t n = 0; n < batch; ++n) {
            const float *row = gy + (n * channels + c) * spatial;
            double a[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            int64_t j = 0;
            for (; j + 8 <= spatial; j += 8)
                for (int k = 0; k < 8; ++k) a[k] += row[j + k];
            double part = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
            for (; j < spatial; ++j) part += row[j];
            s += part;
        }
        gb[c] = (float)s;
    }
}

/* float64: blocks of 256 summed into a running total keeps the rounding
 * error growth at O(n/256) rather than O(n). */
void cc_bias_grad_f64(int64_t batch, int64_t channels, int64_t spatial,
                      const double *gy, double *gb, int nthreads) {
    const int nt = cc_bias_threads(batch, channels, spatial, nthreads);
    const cc_stop_t stop = cc_stop_flag();
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t c = 0; c < channels; ++c) {
        if (CC_STOPPED(stop)) continue;
        double s = 0.0;
        for (int64_t n = 0; n < batch; ++n) {
            const double *row = gy + (n * channels + c) * spatial;
            for (int64_t j0 = 0; j0 < spatial; j0 += 256) {
                int64_t j1 = j0 + 256 < spatial ? j0 + 256 : spatial;
                double part = 0.0;
                for (int64_t j = j0; j < j1; ++j) part += row[j];
                s += part;
            }
        }
        gb[c] = s;
    }
}
