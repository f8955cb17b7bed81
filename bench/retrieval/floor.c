/*
 * The memory-bound floor of exact vector search: cosine (dot product of unit vectors) of one query with
 * every row of an n x dim float32 matrix, keeping the best, in one thread. Also a sign-bit scan (Hamming
 * distance over packed 64-bit words). Built and run by bench/retrieval/floor.ts:
 *   floor <n> <dim> <repeats>  ->  prints "<exact ms> <signbits ms>" (medians over the repeats)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  long n = atol(argv[1]), dim = atol(argv[2]), repeats = atol(argv[3]);
  float *m = malloc(sizeof(float) * n * dim), *q = malloc(sizeof(float) * dim);
  long words = (dim + 63) / 64;
  uint64_t *bits = calloc(n * words, 8), *qb = calloc(words, 8);
  srand(1);
  for (long i = 0; i < n * dim; i++) m[i] = (float)rand() / RAND_MAX - 0.5f;
  for (long j = 0; j < dim; j++) q[j] = (float)rand() / RAND_MAX - 0.5f;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < dim; j++)
      if (m[i * dim + j] > 0) bits[i * words + j / 64] |= 1ULL << (j % 64);
  for (long j = 0; j < dim; j++) if (q[j] > 0) qb[j / 64] |= 1ULL << (j % 64);
  double *exact = malloc(sizeof(double) * repeats), *hamming = malloc(sizeof(double) * repeats);
  volatile float sink = 0;
  for (long r = 0; r < repeats; r++) {
    double t = now_ms();
    float best = -2;
    long at = -1;
    for (long i = 0; i < n; i++) {
      const float *row = m + i * dim;
      float dot = 0;
      for (long j = 0; j < dim; j++) dot += row[j] * q[j];
      if (dot > best) best = dot, at = i;
    }
    exact[r] = now_ms() - t;
    sink += best + at;
    t = now_ms();
    long total = 0;
    for (long i = 0; i < n; i++) {
      int d = 0;
      for (long w = 0; w < words; w++) d += __builtin_popcountll(bits[i * words + w] ^ qb[w]);
      total += d;
    }
    hamming[r] = now_ms() - t;
    sink += total;
  }
  qsort(exact, repeats, sizeof(double), by_value);
  qsort(hamming, repeats, sizeof(double), by_value);
  printf("%.3f %.3f\n", exact[repeats / 2], hamming[repeats / 2]);
  return sink == 12345.678f;
}
