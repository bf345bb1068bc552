/*
 * The C library's expf over an array: flash attention's one-row order (ggml's one_chunk) takes one expf per cached
 * position, which through FFM costs a downcall each; here one downcall serves a whole row chunk. Built without
 * fast-math, so the compiler keeps the plain expf calls (glibc maps them to its vector versions only under
 * __FAST_MATH__): the same function, hence the same bits, as the engine's per-value call (Libm).
 */
#include <math.h>

void lz_expf(const float *x, float *y, int n) {
    for (int i = 0; i < n; i++) {
        y[i] = expf(x[i]);
    }
}
