/*
 * A stand-in for libcuda.so.1 that runs on the CPU, for FakeCudaDriverTest: the CUDA driver API calls the GPU
 * tier binds (memory, copies, streams, modules, launches) with device pointers that are host pointers, and
 * launches that run THE REAL KERNELS of src/main/cuda/*.cu (kernels.cu), compiled here as C++ (shim/cuda_fp16.h):
 * every thread of a block runs as a fiber (a stack of its own, switched by fake_switch below), warps in lockstep at each __shfl_xor_sync, the block at
 * each __syncthreads, block by block over the grid, so grid arithmetic, warp and block reductions, shared
 * memory and early returns behave as on a GPU (a launch with too few blocks
 * leaves rows unwritten; fresh "device" memory is garbage, not zeros). It rejects what a real driver would:
 * a call without a current context on the calling thread, an unknown kernel, a bad launch shape.
 * What it cannot show: GPU-specific behaviour (memory model, timing, real CUDA math library ulps).
 *
 * Build: c++ -O1 -std=c++17 -shared -fPIC -I shim -I ../../main/cuda -o libfakecuda.so fake_cuda.cpp
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <functional>
#include <vector>

#include "cuda_fp16.h"
#include "kernels.cu"

struct FakeLane {
    FakeDim thread;
    void *sp; // the fiber's saved stack pointer while it is parked
    bool done;
    int parked; // 0 running, 1 at a shuffle, 2 at a barrier
    float value;
    int mask;
};

FakeDim blockIdx, blockDim;
FakeLane *fake_current_lane;
FakeDim &fake_thread_idx(FakeLane *lane) { return lane->thread; }

/*
 * Switches fibers: saves the callee-saved registers, MXCSR and the x87 control word on the current stack and
 * its stack pointer in *from, then resumes the stack at to. Not ucontext's swapcontext: that saves and restores
 * the signal mask with a system call on every switch, and a kernel's block switches fibers millions of times
 * (on this week's host, with page-table isolation: FakeCudaDriverTest 1366 s with swapcontext, 36 s with this).
 */
extern "C" void fake_switch(void **from, void *to);
asm(R"(
    .text
    .globl fake_switch
    .type fake_switch, @function
fake_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size fake_switch, .-fake_switch
)");

enum { MAX_THREADS = 1024, STACK = 64 * 1024 };
static FakeLane lanes[MAX_THREADS];
static float exchanged[MAX_THREADS];
static void *scheduler;
static char *stacks;
static std::function<void()> kernel_body;

static void park(int why) {
    FakeLane *me = fake_current_lane;
    me->parked = why;
    fake_switch(&me->sp, scheduler);
}

float __shfl_xor_sync(unsigned, float v, int lane_mask) {
    FakeLane *me = fake_current_lane;
    me->value = v;
    me->mask = lane_mask;
    park(1); // the scheduler exchanges the values once the whole warp is here
    return exchanged[me - lanes];
}

void __syncthreads() { park(2); }

// A fiber's first frame (entered by fake_switch's ret); it never returns: once done, it is never resumed.
extern "C" void fake_lane_start() {
    kernel_body();
    FakeLane *me = fake_current_lane;
    me->done = true;
    fake_switch(&me->sp, scheduler);
    abort();
}

// A fresh fiber's stack as fake_switch leaves a parked one: control words, six registers, then the return into
// fake_lane_start with the stack aligned as after a call.
static void *fresh_stack(char *base) {
    uint64_t *sp = (uint64_t *)((uintptr_t)(base + STACK) & ~(uintptr_t)15);
    *--sp = 0; // where a caller's return address would be
    *--sp = (uint64_t)(uintptr_t)fake_lane_start;
    for (int r = 0; r < 6; r++) *--sp = 0;
    uint32_t mxcsr;
    uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    --sp;
    memcpy((char *)sp, &mxcsr, 4);
    memcpy((char *)sp + 4, &fpucw, 2);
    return sp;
}

/*
 * One block: a fiber per thread, each run until it parks (shuffle or barrier) or ends. A warp whose lanes all
 * wait at a shuffle exchanges and goes on; a barrier opens when every live thread of the block waits at one.
 */
static void run_block(unsigned threads) {
    if (!stacks) stacks = (char *)malloc((size_t)MAX_THREADS * STACK);
    for (unsigned t = 0; t < threads; t++) {
        FakeLane &lane = lanes[t];
        lane.thread = {t, 0, 0};
        lane.done = false;
        lane.parked = 0;
        lane.sp = fresh_stack(stacks + (size_t)t * STACK);
    }
    while (true) {
        for (unsigned t = 0; t < threads; t++) {
            if (!lanes[t].done && lanes[t].parked == 0) {
                fake_current_lane = &lanes[t];
                fake_switch(&scheduler, lanes[t].sp);
            }
        }
        int live = 0, atBarrier = 0;
        bool progressed = false;
        for (unsigned w = 0; w < threads / 32; w++) {
            int shuffling = 0, alive = 0;
            for (unsigned l = w * 32; l < w * 32 + 32; l++) {
                alive += lanes[l].done ? 0 : 1;
                shuffling += !lanes[l].done && lanes[l].parked == 1 ? 1 : 0;
                atBarrier += !lanes[l].done && lanes[l].parked == 2 ? 1 : 0;
            }
            live += alive;
            if (shuffling == 0) continue;
            if (shuffling != 32) abort(); // a shuffle with part of the warp gone or elsewhere: a kernel bug
            for (unsigned l = w * 32; l < w * 32 + 32; l++) {
                exchanged[l] = lanes[w * 32 + ((l - w * 32) ^ lanes[l].mask)].value;
                lanes[l].parked = 0;
            }
            progressed = true;
        }
        if (live == 0) return;
        if (progressed) continue;
        if (atBarrier != live) abort(); // neither a shuffle nor a barrier can go on: deadlock
        for (unsigned t = 0; t < threads; t++) lanes[t].parked = 0;
    }
}

static void launch_grid(unsigned gx, unsigned gy, unsigned bx, const std::function<void()> &body) {
    kernel_body = body;
    blockDim = {bx, 1, 1};
    for (unsigned y = 0; y < gy; y++) {
        for (unsigned x = 0; x < gx; x++) {
            blockIdx = {x, y, 0};
            run_block(bx);
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
static const char *KERNELS[] = {"quantize_q8_0", "gate_up_silu_q", "gemv_q", "rmsnorm_q8", "gemv_q_acc",
                                "gemv3_q", "gemv_f32", "gemv_f16", "qk_norm_rope_store", "attention", "add_f32",
                                "mla_rope_store", "gemv_q8_0_heads", "gate_up_silu_f32", "gate_up_silu_f16",
                                "mla_kv_expand_store", "moe_route", "moe_gate_up_q", "moe_down_q",
                                "rmsnorm_q8_rows", "gemm_tokens", "qk_norm_rope_tokens",
                                "attention_tokens", "moe_route_tokens", "moe_gate_up_tiles", "moe_down_tiles",
                                "moe_combine_tokens", "gemm_tokens_q8", "moe_gate_up_q8", "moe_down_q8"};

// Arguments per kernel (in KERNELS' order): a captured launch copies that many 8-byte slots (LaunchArgs' layout).
static const int ARGS[] = {3, 7, 6, 6, 8, 10, 7, 7, 15, 14, 3, 17, 7, 6, 6, 11, 9, 7, 9,
                           6, 11, 17, 15, 10, 9, 8, 7, 9, 8, 7};
enum { CAPTURE_UNSUPPORTED = 900, CAPTURE_INVALIDATED = 901 };

// A captured launch: kernel, shape and its argument values as they were at capture time.
struct FakeNode {
    void *f;
    unsigned gx, gy, bx;
    uint64_t values[24];
};
struct FakeGraph {
    std::vector<FakeNode> nodes;
};
// The stream being captured (one at a time here) and its graph so far.
static void *capturing;
static FakeGraph *capture;
static long kernel_launches, graph_launches, live_graphs;
static long launches_of[sizeof KERNELS / sizeof *KERNELS];

#define NEED_CONTEXT() do { if (current != &context_token) return INVALID_CONTEXT; } while (0)
#define ARG(type, i) (*(type *)params[i])

extern "C" {

long fake_live_allocations(void) { return live_allocations; }
static long stream_syncs;
long fake_stream_syncs(void) { return stream_syncs; }
long fake_kernel_launches(void) { return kernel_launches; }
// Launches of the named kernel outside graphs (-1: no such kernel), so a test can tell which path ran.
long fake_launches_of(const char *name) {
    for (int i = 0; i < (int)(sizeof KERNELS / sizeof *KERNELS); i++) {
        if (strcmp(name, KERNELS[i]) == 0) return launches_of[i];
    }
    return -1;
}
long fake_graph_launches(void) { return graph_launches; }
// Host registrations made so far, and the bytes copied to the device from registered host memory (the staged experts).
static long host_registrations, registered_upload_bytes;
static std::vector<std::pair<uintptr_t, uintptr_t>> registered;
long fake_host_registrations(void) { return host_registrations; }
long fake_registered_upload_bytes(void) { return registered_upload_bytes; }
long fake_live_graphs(void) { return live_graphs; }
// The layer path keeps copies and syncs out of its graphs: refused while capturing, so a test catches one that slips in
// (a real driver would record a copy as a node, and refuse a sync).
#define NOT_CAPTURING(s) do { if (capturing && (s) == capturing) return CAPTURE_UNSUPPORTED; } while (0)

CUresult cuInit(unsigned flags) { return flags == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return INVALID_VALUE; *d = 0; return OK; }
CUresult cuDeviceGetName(char *name, int len, int) { strncpy(name, "Fake CUDA device", len); return OK; }
CUresult cuDeviceTotalMem_v2(size_t *bytes, int) { *bytes = (size_t)1 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) { *ctx = &context_token; return OK; }
static unsigned primary_flags = 0;
unsigned fake_primary_flags(void) { return primary_flags; }
CUresult cuDevicePrimaryCtxSetFlags_v2(int, unsigned flags) {
    if (flags > 0x1f) return INVALID_VALUE;
    primary_flags = flags;
    return OK;
}
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
// registered ranges count as allocations until unregistered, so a test sees one left pinned
CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) {
    NEED_CONTEXT();
    if (!p || !bytes || ((uintptr_t)p & 4095) || (bytes & 4095) || flags != 8) return INVALID_VALUE;
    live_allocations++;
    host_registrations++;
    registered.push_back({(uintptr_t)p, (uintptr_t)p + bytes});
    return OK;
}
CUresult cuMemHostUnregister(void *p) {
    NEED_CONTEXT();
    if (!p) return INVALID_VALUE;
    live_allocations--;
    for (size_t i = 0; i < registered.size(); i++) {
        if (registered[i].first == (uintptr_t)p) { registered.erase(registered.begin() + i); break; }
    }
    return OK;
}
CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n, void *s) {
    NEED_CONTEXT();
    NOT_CAPTURING(s);
    for (auto &r : registered) {
        if ((uintptr_t)src >= r.first && (uintptr_t)src + n <= r.second) { registered_upload_bytes += n; break; }
    }
    memcpy((void *)(uintptr_t)dst, src, n);
    return OK;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, void *s) { NEED_CONTEXT(); NOT_CAPTURING(s); memcpy(dst, (void *)(uintptr_t)src, n); return OK; }
CUresult cuStreamCreate(void **s, unsigned) { NEED_CONTEXT(); *s = malloc(1); live_allocations++; return OK; }
CUresult cuStreamDestroy_v2(void *s) { NEED_CONTEXT(); free(s); live_allocations--; return OK; }
CUresult cuStreamSynchronize(void *s) { NEED_CONTEXT(); NOT_CAPTURING(s); stream_syncs++; return s ? OK : INVALID_VALUE; }
CUresult cuEventCreate(void **e, unsigned) { NEED_CONTEXT(); *e = malloc(1); live_allocations++; return OK; }
CUresult cuEventDestroy_v2(void *e) { NEED_CONTEXT(); free(e); live_allocations--; return OK; }
CUresult cuEventRecord(void *e, void *s) { NEED_CONTEXT(); NOT_CAPTURING(s); return e && s ? OK : INVALID_VALUE; }
CUresult cuEventSynchronize(void *e) { NEED_CONTEXT(); return e ? OK : INVALID_VALUE; }
// one stream's work runs when queued here: waiting for another's recorded point is always already satisfied
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) { NEED_CONTEXT(); NOT_CAPTURING(s); return s && e && !flags ? OK : INVALID_VALUE; }

static CUresult run_kernel(void *f, unsigned gx, unsigned gy, unsigned bx, void **params);

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned, void *stream, void **params, void **extra) {
    NEED_CONTEXT();
    if (!stream || gz != 1 || by != 1 || bz != 1 || bx % 32 != 0 || bx > 1024 || extra) return INVALID_VALUE;
    if (capturing && stream == capturing) {
        int known = -1;
        for (int i = 0; i < (int)(sizeof KERNELS / sizeof *KERNELS); i++) {
            if (f == (void *)KERNELS[i]) known = i;
        }
        if (known < 0) return INVALID_VALUE;
        FakeNode node = {f, gx, gy, bx, {0}};
        for (int i = 0; i < ARGS[known]; i++) memcpy(&node.values[i], params[i], 8);
        capture->nodes.push_back(node);
        return OK;
    }
    kernel_launches++;
    for (int i = 0; i < (int)(sizeof KERNELS / sizeof *KERNELS); i++) {
        if (f == (void *)KERNELS[i]) launches_of[i]++;
    }
    return run_kernel(f, gx, gy, bx, params);
}

CUresult cuStreamBeginCapture_v2(void *s, int mode) {
    NEED_CONTEXT();
    if (!s || capturing || mode != 1) return INVALID_VALUE;
    capturing = s;
    capture = new FakeGraph();
    return OK;
}

CUresult cuStreamEndCapture(void *s, void **graph) {
    NEED_CONTEXT();
    if (!capturing || s != capturing) return CAPTURE_INVALIDATED;
    *graph = capture;
    live_graphs++;
    capturing = nullptr;
    capture = nullptr;
    return OK;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
    NEED_CONTEXT();
    if (!graph || flags) return INVALID_VALUE;
    *exec = new FakeGraph(*(FakeGraph *)graph);
    live_graphs++;
    return OK;
}

static CUresult destroy_graph(void *g) {
    NEED_CONTEXT();
    if (!g) return INVALID_VALUE;
    delete (FakeGraph *)g;
    live_graphs--;
    return OK;
}
CUresult cuGraphDestroy(void *g) { return destroy_graph(g); }
CUresult cuGraphExecDestroy(void *g) { return destroy_graph(g); }

// Runs the captured kernels in order with their captured arguments (the stream's work is in order anyway here).
CUresult cuGraphLaunch(void *exec, void *stream) {
    NEED_CONTEXT();
    if (!exec || !stream) return INVALID_VALUE;
    NOT_CAPTURING(stream);
    graph_launches++;
    for (FakeNode &n : ((FakeGraph *)exec)->nodes) {
        void *params[24];
        for (int i = 0; i < 24; i++) params[i] = &n.values[i];
        CUresult r = run_kernel(n.f, n.gx, n.gy, n.bx, params);
        if (r != OK) return r;
    }
    return OK;
}

// the kernel a launch names, by name: an index into KERNELS would shift when a kernel is added or removed
static bool is(const char *k, const char *name) { return strcmp(k, name) == 0; }

static CUresult run_kernel(void *f, unsigned gx, unsigned gy, unsigned bx, void **params) {
    const char *k = (const char *)f;
    std::function<void()> body;
    if (is(k, "quantize_q8_0")) {
        body = [&] { quantize_q8_0(ARG(const float *, 0), ARG(uint8_t *, 1), ARG(long long, 2)); };
    } else if (is(k, "gate_up_silu_q")) {
        body = [&] {
            gate_up_silu_q(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(const uint8_t *, 2),
                           ARG(float *, 3), ARG(int, 4), ARG(int, 5), ARG(int, 6));
        };
    } else if (is(k, "gemv_q")) {
        body = [&] { gemv_q(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(float *, 2), ARG(int, 3), ARG(int, 4), ARG(int, 5)); };
    } else if (is(k, "rmsnorm_q8")) {
        body = [&] {
            rmsnorm_q8(ARG(const float *, 0), ARG(const float *, 1), ARG(float *, 2), ARG(uint8_t *, 3), ARG(int, 4),
                       ARG(float, 5));
        };
    } else if (is(k, "gemv_q_acc")) {
        body = [&] {
            gemv_q_acc(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(float *, 2), ARG(int, 3), ARG(int, 4),
                       ARG(float, 5), ARG(int, 6), ARG(int, 7));
        };
    } else if (is(k, "gemv3_q")) {
        body = [&] {
            gemv3_q(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(const uint8_t *, 2), ARG(int, 3),
                    ARG(int, 4), ARG(int, 5), ARG(const uint8_t *, 6), ARG(float *, 7), ARG(int, 8), ARG(int, 9));
        };
    } else if (is(k, "gemv_f32")) {
        body = [&] {
            gemv_f32(ARG(const float *, 0), ARG(const float *, 1), ARG(float *, 2), ARG(int, 3), ARG(int, 4),
                     ARG(float, 5), ARG(int, 6));
        };
    } else if (is(k, "gemv_f16")) {
        body = [&] {
            gemv_f16(ARG(const __half *, 0), ARG(const float *, 1), ARG(float *, 2), ARG(int, 3), ARG(int, 4),
                     ARG(float, 5), ARG(int, 6));
        };
    } else if (is(k, "qk_norm_rope_store")) {
        body = [&] {
            qk_norm_rope_store(ARG(float *, 0), ARG(const float *, 1), ARG(const float *, 2), ARG(const float *, 3),
                               ARG(__half *, 4), ARG(__half *, 5), ARG(float *, 6), ARG(int, 7), ARG(int, 8),
                               ARG(int, 9), ARG(int, 10), ARG(int, 11), ARG(int, 12), ARG(const int *, 13), ARG(float, 14));
        };
    } else if (is(k, "attention")) {
        body = [&] {
            attention(ARG(const float *, 0), ARG(const __half *, 1), ARG(const __half *, 2), ARG(float *, 3),
                      ARG(int, 4), ARG(float *, 5), ARG(int, 6), ARG(int, 7), ARG(int, 8), ARG(int, 9), ARG(int, 10),
                      ARG(const int *, 11), ARG(float, 12), ARG(uint8_t *, 13));
        };
    } else if (is(k, "add_f32")) {
        body = [&] { add_f32(ARG(float *, 0), ARG(const float *, 1), ARG(int, 2)); };
    } else if (is(k, "mla_rope_store")) {
        body = [&] {
            mla_rope_store(ARG(const float *, 0), ARG(const float *, 1), ARG(const float *, 2), ARG(const float *, 3),
                           ARG(float *, 4), ARG(int, 5), ARG(int, 6), ARG(__half *, 7), ARG(float *, 8), ARG(int, 9),
                           ARG(int, 10), ARG(int, 11), ARG(int, 12), ARG(int, 13), ARG(int, 14), ARG(const int *, 15),
                           ARG(float, 16));
        };
    } else if (is(k, "gemv_q8_0_heads")) {
        body = [&] {
            gemv_q8_0_heads(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(long long, 2), ARG(float *, 3),
                            ARG(int, 4), ARG(int, 5), ARG(int, 6));
        };
    } else if (is(k, "gate_up_silu_f32")) {
        body = [&] {
            gate_up_silu_f32(ARG(const float *, 0), ARG(const float *, 1), ARG(const float *, 2), ARG(float *, 3),
                             ARG(int, 4), ARG(int, 5));
        };
    } else if (is(k, "mla_kv_expand_store")) {
        body = [&] {
            mla_kv_expand_store(ARG(const float *, 0), ARG(const float *, 1), ARG(__half *, 2), ARG(__half *, 3),
                                ARG(float *, 4), ARG(int, 5), ARG(int, 6), ARG(int, 7), ARG(int, 8), ARG(int, 9),
                                ARG(const int *, 10));
        };
    } else if (is(k, "gate_up_silu_f16")) {
        body = [&] {
            gate_up_silu_f16(ARG(const __half *, 0), ARG(const __half *, 1), ARG(const float *, 2), ARG(float *, 3),
                             ARG(int, 4), ARG(int, 5));
        };
    } else if (is(k, "moe_route")) {
        body = [&] {
            moe_route(ARG(const float *, 0), ARG(const float *, 1), ARG(int, 2), ARG(int, 3), ARG(int, 4), ARG(int, 5),
                      ARG(float, 6), ARG(int *, 7), ARG(float *, 8));
        };
    } else if (is(k, "moe_gate_up_q")) {
        body = [&] {
            moe_gate_up_q(ARG(const unsigned long long *, 0), ARG(const int *, 1), ARG(const uint8_t *, 2),
                          ARG(uint8_t *, 3), ARG(int, 4), ARG(int, 5), ARG(int, 6));
        };
    } else if (is(k, "moe_down_q")) {
        body = [&] {
            moe_down_q(ARG(const unsigned long long *, 0), ARG(const int *, 1), ARG(const float *, 2),
                       ARG(const uint8_t *, 3), ARG(float *, 4), ARG(int, 5), ARG(int, 6), ARG(int, 7), ARG(int, 8));
        };
    } else if (is(k, "rmsnorm_q8_rows")) {
        body = [&] {
            rmsnorm_q8_rows(ARG(const float *, 0), ARG(const float *, 1), ARG(float *, 2), ARG(uint8_t *, 3),
                            ARG(int, 4), ARG(float, 5));
        };
    } else if (is(k, "gemm_tokens")) {
        body = [&] {
            gemm_tokens(ARG(const uint8_t *, 0), ARG(const float *, 1), ARG(const uint8_t *, 2), ARG(float *, 3),
                        ARG(int, 4), ARG(int, 5), ARG(int, 6), ARG(int, 7), ARG(float, 8), ARG(int, 9), ARG(int, 10));
        };
    } else if (is(k, "qk_norm_rope_tokens")) {
        body = [&] {
            qk_norm_rope_tokens(ARG(float *, 0), ARG(int, 1), ARG(const float *, 2), ARG(const float *, 3),
                                ARG(const float *, 4), ARG(__half *, 5), ARG(__half *, 6), ARG(float *, 7), ARG(int, 8),
                                ARG(int, 9), ARG(int, 10), ARG(int, 11), ARG(int, 12), ARG(int, 13), ARG(int, 14),
                                ARG(int, 15), ARG(float, 16));
        };
    } else if (is(k, "attention_tokens")) {
        body = [&] {
            attention_tokens(ARG(const float *, 0), ARG(int, 1), ARG(const __half *, 2), ARG(const __half *, 3),
                             ARG(float *, 4), ARG(int, 5), ARG(float *, 6), ARG(int, 7), ARG(int, 8), ARG(int, 9),
                             ARG(int, 10), ARG(int, 11), ARG(int, 12), ARG(int, 13), ARG(float, 14));
        };
    } else if (is(k, "moe_route_tokens")) {
        body = [&] {
            moe_route_tokens(ARG(const float *, 0), ARG(int, 1), ARG(const float *, 2), ARG(int, 3), ARG(int, 4),
                             ARG(int, 5), ARG(int, 6), ARG(float, 7), ARG(int *, 8), ARG(float *, 9));
        };
    } else if (is(k, "moe_gate_up_tiles")) {
        body = [&] {
            moe_gate_up_tiles(ARG(const unsigned long long *, 0), ARG(const int *, 1), ARG(const int *, 2), ARG(int, 3),
                              ARG(const uint8_t *, 4), ARG(float *, 5), ARG(int, 6), ARG(int, 7), ARG(int, 8));
        };
    } else if (is(k, "moe_down_tiles")) {
        body = [&] {
            moe_down_tiles(ARG(const unsigned long long *, 0), ARG(const int *, 1), ARG(const int *, 2),
                           ARG(const uint8_t *, 3), ARG(float *, 4), ARG(int, 5), ARG(int, 6), ARG(int, 7));
        };
    } else if (is(k, "moe_combine_tokens")) {
        body = [&] {
            moe_combine_tokens(ARG(const unsigned long long *, 0), ARG(const int *, 1), ARG(const float *, 2),
                               ARG(const float *, 3), ARG(float *, 4), ARG(int, 5), ARG(int, 6));
        };
    } else if (is(k, "gemm_tokens_q8")) {
        body = [&] {
            gemm_tokens_q8(ARG(const uint8_t *, 0), ARG(const uint8_t *, 1), ARG(float *, 2), ARG(int, 3), ARG(int, 4),
                           ARG(int, 5), ARG(int, 6), ARG(float, 7), ARG(int, 8));
        };
    } else if (is(k, "moe_gate_up_q8")) {
        body = [&] {
            moe_gate_up_q8(ARG(const unsigned long long *, 0), ARG(const int *, 1), ARG(const int *, 2), ARG(int, 3),
                           ARG(const uint8_t *, 4), ARG(float *, 5), ARG(int, 6), ARG(int, 7));
        };
    } else if (is(k, "moe_down_q8")) {
        body = [&] {
            moe_down_q8(ARG(const unsigned long long *, 0), ARG(const int *, 1), ARG(const int *, 2),
                        ARG(const uint8_t *, 3), ARG(float *, 4), ARG(int, 5), ARG(int, 6));
        };
    } else {
        return INVALID_VALUE;
    }
    launch_grid(gx, gy, bx, body);
    return OK;
}

} // extern "C"
