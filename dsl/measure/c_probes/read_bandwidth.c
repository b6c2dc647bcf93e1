/* Single-core read bandwidth: sums a float array (256 MiB unless told) with 8 independent
 * vector accumulators (AVX-512 or AVX2), best of repeated passes, in GB/s. The memory roofline
 * of tdsl.measure.roofline. Built and run like fma_peak.c:
 *   cc -O2 -march=native read_bandwidth.c -o read_bandwidth && ./read_bandwidth [seconds] [MiB]   */
#include <stdio.h>
#include <stdlib.h>

#include "vec.h"

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  const long mib = argc > 2 ? atol(argv[2]) : 256; /* far beyond the cache a core has */
  if (mib < 1) return 2;
  const long n = mib * 1024 * 1024 / sizeof(float);
  float *data = aligned_alloc(64, n * sizeof(float));
  if (!data) return 1;
  for (long i = 0; i < n; ++i) data[i] = (float)(i & 1023) * 1e-3f;
  vec s0 = ZERO(), s1 = ZERO(), s2 = ZERO(), s3 = ZERO(), s4 = ZERO(), s5 = ZERO(), s6 = ZERO(), s7 = ZERO();
  double best = 0, start = now();
  int passes = 0;
  while (now() - start < seconds || passes < 3) {
    double t0 = now();
    for (long i = 0; i < n; i += 8 * LANES) {
      s0 = ADD(s0, LOAD(data + i)); s1 = ADD(s1, LOAD(data + i + LANES));
      s2 = ADD(s2, LOAD(data + i + 2 * LANES)); s3 = ADD(s3, LOAD(data + i + 3 * LANES));
      s4 = ADD(s4, LOAD(data + i + 4 * LANES)); s5 = ADD(s5, LOAD(data + i + 5 * LANES));
      s6 = ADD(s6, LOAD(data + i + 6 * LANES)); s7 = ADD(s7, LOAD(data + i + 7 * LANES));
    }
    double rate = n * sizeof(float) / (now() - t0) / 1e9;
    if (rate > best) best = rate;
    ++passes;
  }
  vec sum = ADD(ADD(ADD(s0, s1), ADD(s2, s3)), ADD(ADD(s4, s5), ADD(s6, s7)));
  printf("%.1f GB/s read (%d lanes, best of %d passes over %ld MiB; checksum %g)\n", best, LANES, passes, mib, first(sum));
  free(data);
  return 0;
}
