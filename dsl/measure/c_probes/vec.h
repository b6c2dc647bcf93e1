/* What the single-core probes (fma_peak.c, read_bandwidth.c) share: the widest f32 vector of
 * the build's ISA (AVX-512, else AVX2) with its lanes and operations, and a monotonic clock. */
#ifndef TDSL_BENCH_VEC_H
#define TDSL_BENCH_VEC_H
#include <immintrin.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define SET1(x) _mm512_set1_ps(x)
#define ADD(a, b) _mm512_add_ps(a, b)
#define LOAD(p) _mm512_loadu_ps(p)
#define ZERO() _mm512_setzero_ps()
static float first(vec v) { return _mm512_cvtss_f32(v); }
#elif defined(__AVX2__)
typedef __m256 vec;
#define LANES 8
#if defined(__FMA__)
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#endif
#define SET1(x) _mm256_set1_ps(x)
#define ADD(a, b) _mm256_add_ps(a, b)
#define LOAD(p) _mm256_loadu_ps(p)
#define ZERO() _mm256_setzero_ps()
static float first(vec v) { return _mm256_cvtss_f32(v); }
#else
#error "needs AVX2 or AVX-512"
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
#endif
