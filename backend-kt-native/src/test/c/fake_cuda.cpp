/*
 * A stand-in for libcuda.so.1 that runs on the CPU, for FakeCudaDriverTest: the CUDA driver API calls the GPU
 * tier binds (memory, copies, streams, modules, launches) with device pointers that are host pointers, and
 * launches that run THE REAL KERNELS of src/main/cuda/experts.cu, compiled here as C++ (shim/cuda_fp16.h):
 * every warp runs as 32 fibers (ucontext) in lockstep at each __shfl_xor_sync, block by block over the grid,
 * so grid arithmetic, warp reductions and early returns behave as on a GPU (a launch with too few blocks
 * leaves rows unwritten; fresh "device" memory is garbage, not zeros). It rejects what a real driver would:
 * a call without a current context on the calling thread, an unknown kernel, a bad launch shape.
 * What it cannot show: GPU-specific behaviour (memory model, timing, real CUDA math library ulps).
 *
 * Build: c++ -O1 -std=c++17 -shared -fPIC -I shim -I ../../main/cuda -o libfakecuda.so fake_cuda.cpp
 */
#include <ucontext.h>
#include <stdlib.h>
#include <string.h>
#include <functional>

#include "cuda_fp16.h"
#include "experts.cu"

struct FakeLane {
    FakeDim thread;
    ucontext_t context;
    bool done;
    float value;
    int mask;
};

FakeDim blockIdx, blockDim;
FakeLane *fake_current_lane;
FakeDim &fake_thread_idx(FakeLane *lane) { return lane->thread; }

static FakeLane lanes[32];
static float exchanged[32];
static ucontext_t scheduler;
static char stacks[32][256 * 1024];
static std::function<void()> kernel_body;

float __shfl_xor_sync(unsigned, float v, int lane_mask) {
    FakeLane *me = fake_current_lane;
    me->value = v;
    me->mask = lane_mask;
    swapcontext(&me->context, &scheduler); // every lane parks here, then the scheduler exchanges the values
    return exchanged[me - lanes];
}

static void lane_entry() {
    kernel_body();
    fake_current_lane->done = true;
}

/* One warp of the current block: 32 fibers stepped together from shuffle to shuffle. */
static void run_warp(unsigned warp) {
    for (int l = 0; l < 32; l++) {
        FakeLane &lane = lanes[l];
        lane.thread = {warp * 32 + l, 0, 0};
        lane.done = false;
        getcontext(&lane.context);
        lane.context.uc_stack.ss_sp = stacks[l];
        lane.context.uc_stack.ss_size = sizeof stacks[l];
        lane.context.uc_link = &scheduler;
        makecontext(&lane.context, lane_entry, 0);
    }
    while (true) {
        int waiting = 0;
        for (int l = 0; l < 32; l++) {
            if (!lanes[l].done) {
                fake_current_lane = &lanes[l];
                swapcontext(&scheduler, &lanes[l].context);
                waiting += lanes[l].done ? 0 : 1;
            }
        }
        if (waiting == 0) {
            return;
        }
        if (waiting != 32) {
            abort(); // a shuffle with part of the warp gone: undefined on a GPU, a kernel bug here
        }
        for (int l = 0; l < 32; l++) {
            exchanged[l] = lanes[l ^ lanes[l].mask].value;
        }
    }
}

static void launch_grid(unsigned gx, unsigned gy, unsigned bx, const std::function<void()> &body) {
    kernel_body = body;
    blockDim = {bx, 1, 1};
    for (unsigned y = 0; y < gy; y++) {
        for (unsigned x = 0; x < gx; x++) {
            blockIdx = {x, y, 0};
            for (unsigned w = 0; w < bx / 32; w++) {
                run_warp(w);
            }
        }
    }
}

// ---- driver API ----

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_CONTEXT = 201, NOT_FOUND = 500 };

static int context_token;
static int module_token;
static thread_local void *current;
static long live_allocations;
static const char *KERNELS[] = {"quantize_q8_0", "gate_up_silu_q8_0", "gemv_q8_0"};

#define NEED_CONTEXT() do { if (current != &context_token) return INVALID_CONTEXT; } while (0)
#define ARG(type, i) (*(type *)params[i])

extern "C" {

long fake_live_allocations(void) { return live_allocations; }

CUresult cuInit(unsigned flags) { return flags == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return INVALID_VALUE; *d = 0; return OK; }
CUresult cuDeviceGetName(char *name, int len, int) { strncpy(name, "Fake CUDA device", len); return OK; }
CUresult cuDeviceTotalMem_v2(size_t *bytes, int) { *bytes = (size_t)1 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) { *ctx = &context_token; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return OK; }
CUresult cuCtxSetCurrent(void *ctx) { if (ctx != &context_token) return INVALID_CONTEXT; current = ctx; return OK; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = r == INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT" : "fake error"; return OK; }

CUresult cuModuleLoadData(void **module, const void *image) { NEED_CONTEXT(); *module = &module_token; return image ? OK : INVALID_VALUE; }
CUresult cuModuleUnload(void *module) { NEED_CONTEXT(); return module == &module_token ? OK : INVALID_VALUE; }
CUresult cuModuleGetFunction(void **f, void *, const char *name) {
    NEED_CONTEXT();
    for (const char *k : KERNELS) {
        if (strcmp(name, k) == 0) { *f = (void *)k; return OK; }
    }
    return NOT_FOUND;
}

CUresult cuMemAlloc_v2(uint64_t *p, size_t bytes) {
    NEED_CONTEXT();
    void *m = malloc(bytes);
    if (!m) return OUT_OF_MEMORY;
    memset(m, 0x7f, bytes);
    *p = (uint64_t)(uintptr_t)m;
    live_allocations++;
    return OK;
}
CUresult cuMemFree_v2(uint64_t p) { NEED_CONTEXT(); if (!p) return INVALID_VALUE; free((void *)(uintptr_t)p); live_allocations--; return OK; }
CUresult cuMemAllocHost_v2(void **p, size_t bytes) { NEED_CONTEXT(); *p = malloc(bytes); live_allocations++; return OK; }
CUresult cuMemFreeHost(void *p) { NEED_CONTEXT(); free(p); live_allocations--; return OK; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n, void *) { NEED_CONTEXT(); memcpy((void *)(uintptr_t)dst, src, n); return OK; }
CUresult cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, void *) { NEED_CONTEXT(); memcpy(dst, (void *)(uintptr_t)src, n); return OK; }
CUresult cuStreamCreate(void **s, unsigned) { NEED_CONTEXT(); *s = malloc(1); live_allocations++; return OK; }
CUresult cuStreamDestroy_v2(void *s) { NEED_CONTEXT(); free(s); live_allocations--; return OK; }
CUresult cuStreamSynchronize(void *s) { NEED_CONTEXT(); return s ? OK : INVALID_VALUE; }

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned, void *stream, void **params, void **extra) {
    NEED_CONTEXT();
    if (!stream || gz != 1 || by != 1 || bz != 1 || bx % 32 != 0 || bx > 1024 || extra) return INVALID_VALUE;
    if (f == KERNELS[0]) {
        launch_grid(gx, gy, bx, [&] { quantize_q8_0(ARG(const float *, 0), ARG(uint8_t *, 1), ARG(long long, 2)); });
    } else if (f == KERNELS[1]) {
        launch_grid(gx, gy, bx, [&] {
            gate_up_silu_q8_0(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(const uint8_t *, 2),
                              ARG(float *, 3), ARG(int, 4), ARG(int, 5));
        });
    } else if (f == KERNELS[2]) {
        launch_grid(gx, gy, bx, [&] {
            gemv_q8_0(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(float *, 2), ARG(int, 3), ARG(int, 4));
        });
    } else {
        return INVALID_VALUE;
    }
    return OK;
}

} // extern "C"
