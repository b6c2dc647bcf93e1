/* Single-core f32 FMA peak: 12 independent accumulator chains of 256-bit (AVX2) or 512-bit
 * (AVX-512) FMAs, enough to cover FMA latency x throughput on current x86 cores.
 * Prints GFLOP/s (2 FLOP per lane per FMA). Built and run by tdsl.measure.probes (one copy
 * per thread of the roofline, side by side):
 *   cc -O2 -march=native fma_peak.c -o fma_peak && ./fma_peak [seconds]               */
#include <stdio.h>
#include <stdlib.h>

#include "vec.h"

#ifndef FMA
#error "needs AVX2+FMA or AVX-512"
#endif

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.5;
  vec a = SET1(0.999999f), b = SET1(1e-7f);
  vec c0 = SET1(1), c1 = SET1(2), c2 = SET1(3), c3 = SET1(4), c4 = SET1(5), c5 = SET1(6);
  vec c6 = SET1(7), c7 = SET1(8), c8 = SET1(9), c9 = SET1(10), c10 = SET1(11), c11 = SET1(12);
  long iters = 0;
  double best = 0, start = now();
  while (now() - start < seconds) {
    const long n = 1000000;
    double t0 = now();
    for (long i = 0; i < n; ++i) {
      c0 = FMA(c0, a, b); c1 = FMA(c1, a, b); c2 = FMA(c2, a, b); c3 = FMA(c3, a, b);
      c4 = FMA(c4, a, b); c5 = FMA(c5, a, b); c6 = FMA(c6, a, b); c7 = FMA(c7, a, b);
      c8 = FMA(c8, a, b); c9 = FMA(c9, a, b); c10 = FMA(c10, a, b); c11 = FMA(c11, a, b);
      __asm__ volatile("" : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5));
    }
    double rate = 12.0 * LANES * 2 * n / (now() - t0) / 1e9;
    if (rate > best) best = rate;
    iters += n;
  }
  vec sum = ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(ADD(c6, c7), ADD(ADD(c8, c9), ADD(c10, c11)))));
  printf("%.1f GFLOP/s f32 (%d lanes, best of %ld M iterations; checksum %g)\n", best, LANES, iters / 1000000, first(sum));
  return 0;
}
