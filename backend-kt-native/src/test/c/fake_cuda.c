/*
 * A stand-in for libcuda.so.1 that runs on the CPU, for FakeCudaDriverTest: the CUDA driver API calls the
 * GPU tier binds (memory, copies, streams, modules, launches), with device pointers that are host pointers
 * and the kernels of src/main/cuda/experts.cu re-implemented in C, including their grid arithmetic (a launch
 * with too few blocks leaves rows unwritten, as on a GPU). It checks what a real driver would reject: a
 * call without a current context on the calling thread, an unknown kernel, a bad free. It does NOT test
 * the CUDA kernels themselves; it tests the Java side (bindings, argument packing, offsets, staging,
 * context handling, frees) before a real GPU is at hand.
 *
 * Build: cc -O2 -shared -fPIC -o libfakecuda.so fake_cuda.c -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, INVALID_CONTEXT = 201, NOT_FOUND = 500 };
enum { QK = 32, BLOCK_BYTES = 34, WARPS = 4 };

static int context_token;
static __thread void *current;
static long live_allocations;
static long launches;

long fake_live_allocations(void) { return live_allocations; }
long fake_launches(void) { return launches; }

#define NEED_CONTEXT() do { if (current != &context_token) return INVALID_CONTEXT; } while (0)

CUresult cuInit(unsigned flags) { return flags == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return INVALID_VALUE; *d = 0; return OK; }
CUresult cuDeviceGetName(char *name, int len, int d) { strncpy(name, "Fake CUDA device", len); return OK; }
CUresult cuDeviceTotalMem_v2(size_t *bytes, int d) { *bytes = (size_t)1 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { *ctx = &context_token; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return OK; }
CUresult cuCtxSetCurrent(void *ctx) { if (ctx != &context_token) return INVALID_CONTEXT; current = ctx; return OK; }

static const char *KERNELS[] = {"quantize_q8_0", "gate_up_silu_q8_0", "gemv_q8_0"};
static int module_token;

CUresult cuModuleLoadData(void **module, const void *image) {
    NEED_CONTEXT();
    *module = &module_token;
    return image ? OK : INVALID_VALUE;
}
CUresult cuModuleUnload(void *module) { NEED_CONTEXT(); return module == &module_token ? OK : INVALID_VALUE; }
CUresult cuModuleGetFunction(void **f, void *module, const char *name) {
    NEED_CONTEXT();
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, KERNELS[i]) == 0) { *f = (void *)KERNELS[i]; return OK; }
    }
    return NOT_FOUND;
}

CUresult cuMemAlloc_v2(uint64_t *p, size_t bytes) {
    NEED_CONTEXT();
    void *m = malloc(bytes);
    memset(m, 0x7f, bytes); /* garbage, as device memory is: unwritten outputs must not look like zeros */
    *p = (uint64_t)(uintptr_t)m;
    live_allocations++;
    return m ? OK : 2;
}
CUresult cuMemFree_v2(uint64_t p) { NEED_CONTEXT(); if (!p) return INVALID_VALUE; free((void *)(uintptr_t)p); live_allocations--; return OK; }
CUresult cuMemAllocHost_v2(void **p, size_t bytes) { NEED_CONTEXT(); *p = malloc(bytes); live_allocations++; return OK; }
CUresult cuMemFreeHost(void *p) { NEED_CONTEXT(); free(p); live_allocations--; return OK; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n, void *s) { NEED_CONTEXT(); memcpy((void *)(uintptr_t)dst, src, n); return OK; }
CUresult cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, void *s) { NEED_CONTEXT(); memcpy(dst, (void *)(uintptr_t)src, n); return OK; }
CUresult cuStreamCreate(void **s, unsigned flags) { NEED_CONTEXT(); *s = malloc(1); live_allocations++; return OK; }
CUresult cuStreamDestroy_v2(void *s) { NEED_CONTEXT(); free(s); live_allocations--; return OK; }
CUresult cuStreamSynchronize(void *s) { NEED_CONTEXT(); return s ? OK : INVALID_VALUE; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = r == INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT" : "fake error"; return OK; }

static float half_to_float(const uint8_t *p) { _Float16 h; memcpy(&h, p, 2); return (float)h; }

static void quantize_block(const float *x, uint8_t *y) {
    float amax = 0;
    for (int i = 0; i < QK; i++) amax = fmaxf(amax, fabsf(x[i]));
    float id = amax != 0 ? 127.0f / amax : 0;
    for (int i = 0; i < QK; i++) y[2 + i] = (uint8_t)(int8_t)(int)rintf(x[i] * id);
    _Float16 d = (_Float16)(amax / 127.0f);
    memcpy(y, &d, 2);
}

static float row_dot(const uint8_t *w, const uint8_t *x, int blocks) {
    float acc = 0;
    for (int b = 0; b < blocks; b++) {
        const uint8_t *wb = w + (long)b * BLOCK_BYTES, *xb = x + (long)b * BLOCK_BYTES;
        int s = 0;
        for (int i = 0; i < QK; i++) s += (int8_t)wb[2 + i] * (int8_t)xb[2 + i];
        acc += (float)s * (half_to_float(wb) * half_to_float(xb));
    }
    return acc;
}

#define ARG(type, i) (*(type *)params[i])

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
    NEED_CONTEXT();
    if (!stream || gz != 1 || by != 1 || bz != 1 || bx % 32 != 0 || extra) return INVALID_VALUE;
    launches++;
    unsigned warps = bx / 32;
    if (f == KERNELS[0]) {
        const float *x = ARG(const float *, 0);
        uint8_t *y = ARG(uint8_t *, 1);
        long long count = ARG(long long, 2);
        for (unsigned c = 0; c < gx; c++)
            for (unsigned w = 0; w < warps; w++) {
                long long b = (long long)c * WARPS + w;
                if (b < count) quantize_block(x + b * QK, y + b * BLOCK_BYTES);
            }
        return OK;
    }
    if (f == KERNELS[1] || f == KERNELS[2]) {
        int two = f == KERNELS[1];
        const uint8_t *w0 = ARG(const uint8_t *, 0);
        const uint8_t *w1 = two ? ARG(const uint8_t *, 1) : NULL;
        const uint8_t *xq = ARG(const uint8_t *, two ? 2 : 1);
        float *out = ARG(float *, two ? 3 : 2);
        int rows = ARG(int, two ? 4 : 3), cols = ARG(int, two ? 5 : 4);
        int blocks = cols / QK;
        long row_bytes = (long)blocks * BLOCK_BYTES;
        for (unsigned t = 0; t < gy; t++)
            for (unsigned c = 0; c < gx; c++)
                for (unsigned w = 0; w < warps; w++) {
                    int r = (int)(c * WARPS + w);
                    if (r >= rows) continue;
                    const uint8_t *x = xq + t * row_bytes;
                    float g = row_dot(w0 + r * row_bytes, x, blocks);
                    if (two) {
                        float u = row_dot(w1 + r * row_bytes, x, blocks);
                        g = g / (1.0f + expf(-g)) * u;
                    }
                    out[(long)t * rows + r] = g;
                }
        return OK;
    }
    return INVALID_VALUE;
}
