// MoE kernels of the GPU layer path that route on the device (dev.lazarus.kt.gpu.DeviceMoe): top-k routing of
// the router logits, then the chosen experts' SwiGLU with their weights taken from a per-block table of device
// pointers, so a step whose experts are all on the GPU needs no round trip to the host. An expert whose table
// entry is zero lives on the CPU: these kernels skip it and the host adds its output (hybrid placements).
//
// Numerics follow the CPU path (model.ExpertRouter, Numerics.softmaxRow, MoeFeedForward): softmax with ggml's
// vector exp on whole 16-lane chunks summed in double chunk by chunk (GgmlSums.reduce16's order), top-k by
// value then lower index, weights renormalised by a double sum; each expert's output weighted and summed in
// routing order without fused multiply-adds, then added to the residual once.

#include "quants.cuh"

#define ROUTE_MAX 1024
#define MIN_WEIGHT_SUM 6.103515625e-5f

// One warp: logits[n] -> ids[k] (best first) and weights[k]. bias (may be null) shifts the choice only;
// sigmoid gating otherwise softmax; normalize: weights divided by their sum; scale (0 or 1: none) multiplies
// them. n <= ROUTE_MAX. Group-limited routing (deepseek2's groups) stays on the host.
__device__ __forceinline__ void route_token(const float* __restrict__ logits, const float* __restrict__ bias, int n,
                                            int k, int sigmoid, int normalize, float scale, int* __restrict__ ids,
                                            float* __restrict__ weights) {
    __shared__ float probs[ROUTE_MAX];
    __shared__ float sel[ROUTE_MAX];
    __shared__ int taken[ROUTE_MAX];
    __shared__ int chosen[ROUTE_MAX];
    __shared__ float chosenWeight[ROUTE_MAX];
    int lane = threadIdx.x & 31;
    if (sigmoid) {
        for (int i = lane; i < n; i += 32) probs[i] = 1.0f / (1.0f + expf(-logits[i]));
    } else {
        float m = __int_as_float(0xff800000);
        for (int i = lane; i < n; i += 32) m = fmaxf(m, logits[i]);
        m = warp_max(m);
        for (int i = lane; i < n; i += 32) probs[i] = ggml_expf(logits[i] - m, i, n);
        __syncthreads();
        if (lane == 0) {
            double sum = 0.0;
            int chunks = n & -16;
            for (int c = 0; c < chunks; c += 16) {
                const float* v = probs + c;
                float t0 = (v[12] + v[4]) + (v[8] + v[0]);
                float t1 = (v[13] + v[5]) + (v[9] + v[1]);
                float t2 = (v[14] + v[6]) + (v[10] + v[2]);
                float t3 = (v[15] + v[7]) + (v[11] + v[3]);
                sum += (double)((t0 + t2) + (t1 + t3));
            }
            for (int i = chunks; i < n; i++) sum += (double)probs[i];
            sel[0] = (float)(1.0 / sum); // a scratch slot: sel is written below
        }
        __syncthreads();
        float inv = sel[0];
        __syncthreads();
        for (int i = lane; i < n; i += 32) probs[i] = probs[i] * inv;
    }
    for (int i = lane; i < n; i += 32) {
        sel[i] = bias != nullptr ? probs[i] + bias[i] : probs[i];
        taken[i] = 0;
    }
    __syncthreads();
    for (int j = 0; j < k; j++) {
        float best = __int_as_float(0xff800000);
        float at = (float)ROUTE_MAX; // indices travel as floats (exact below 2^24) through the float shuffles
        for (int i = lane; i < n; i += 32) {
            if (!taken[i] && (at == (float)ROUTE_MAX || sel[i] > best)) {
                best = sel[i];
                at = (float)i;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            float ob = __shfl_xor_sync(0xffffffffu, best, o);
            float oa = __shfl_xor_sync(0xffffffffu, at, o);
            if (oa != (float)ROUTE_MAX && (at == (float)ROUTE_MAX || ob > best || (ob == best && oa < at))) {
                best = ob;
                at = oa;
            }
        }
        if (lane == 0) {
            chosen[j] = (int)at;
            taken[(int)at] = 1;
        }
        __syncthreads();
    }
    // The choices and weights stay in shared memory until the end: reading back the global ids and weights
    // just written cost a memory round trip per choice (the route of 64 experts, 8 chosen, took ~10 us on an H100).
    if (lane == 0) {
        double total = 0.0;
        for (int j = 0; j < k; j++) {
            chosenWeight[j] = probs[chosen[j]];
            total += (double)chosenWeight[j];
        }
        if (normalize) {
            float sum = fmaxf((float)total, MIN_WEIGHT_SUM);
            for (int j = 0; j < k; j++) chosenWeight[j] = chosenWeight[j] / sum;
        }
        if (scale != 0.0f && scale != 1.0f) {
            for (int j = 0; j < k; j++) chosenWeight[j] = chosenWeight[j] * scale;
        }
    }
    __syncthreads();
    for (int j = lane; j < k; j += 32) {
        ids[j] = chosen[j];
        weights[j] = chosenWeight[j];
    }
}

extern "C" __global__ void moe_route(const float* __restrict__ logits, const float* __restrict__ bias, int n, int k,
                                     int sigmoid, int normalize, float scale, int* __restrict__ ids,
                                     float* __restrict__ weights) {
    route_token(logits, bias, n, k, sigmoid, normalize, scale, ids, weights);
}

// hq[j] = Q8_0(silu(gate . x) * (up . x)) for the j-th chosen expert (grid.y over the k choices), its matrices
// found in table[3 * ids[j]] (gate, up, down; gate and up of type, quants.cuh); a zero entry (a CPU expert) is
// skipped. A block of MOE_GU_WARPS warps computes 32 rows, 32 / MOE_GU_WARPS per warp with their gate and up loads
// interleaved (typed_rows_dot), and quantizes them as one Q8_0 block (the re-quantization the down projection
// reads, without a launch of its own). A warp per row (32 warps of 64 registers) filled an H100 1.5 times over on
// the skewed bench model (192 blocks, one of 1024 threads per SM): two rows a warp fit in one wave. The launch
// bounds hold it to 64 registers (two blocks an SM): Q5_K's and Q6_K's branches spill ~100 bytes under them, Q8_0's
// and Q4_K's none (ptxas -v, sm_90).
#define MOE_GU_WARPS 16
extern "C" __global__ void __launch_bounds__(32 * MOE_GU_WARPS, 2) moe_gate_up_q(
        const unsigned long long* __restrict__ table, const int* __restrict__ ids, const uint8_t* __restrict__ xq,
        uint8_t* __restrict__ hq, int hidden, int dim, int type) {
    const int per = 32 / MOE_GU_WARPS;
    __shared__ float h[32];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int j = blockIdx.y;
    const uint8_t* gate = (const uint8_t*)table[3 * ids[j]];
    if (gate == nullptr) return; // the whole block leaves: every thread reads the same entry
    const uint8_t* up = (const uint8_t*)table[3 * ids[j] + 1];
    long long rowBytes = quant_row_bytes(type, dim);
    const uint8_t* w[2 * per];
    const uint8_t* x[2 * per];
#pragma unroll
    for (int i = 0; i < per; i++) {
        long long at = (long long)(blockIdx.x * 32 + warp + i * MOE_GU_WARPS) * rowBytes;
        w[2 * i] = gate + at;
        w[2 * i + 1] = up + at;
        x[2 * i] = x[2 * i + 1] = xq;
    }
    float d[2 * per];
    typed_rows_dot<2 * per>(type, w, x, dim, d);
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < per; i++) {
            int r = blockIdx.x * 32 + warp + i * MOE_GU_WARPS;
            float g = d[2 * i], u = d[2 * i + 1];
            h[warp + i * MOE_GU_WARPS] = g / (1.0f + ggml_expf(0.0f - g, r, hidden)) * u;
        }
    }
    __syncthreads();
    if (warp == 0) quantize_block(h[lane], hq + ((long long)j * hidden + blockIdx.x * 32) / QK * BLOCK_BYTES);
}

// x[r] += sum over the k choices, in routing order, of weights[j] * (down_j . hq_j)_r, the GPU experts only (a zero
// table entry is a CPU expert, whose output the host adds); no fused multiply-adds, as the CPU path sums. One warp
// per row r, its experts' rows MOE_DOWN_GROUP at a time with their loads interleaved (typed_rows_dot); down of type
// (quants.cuh), hq holding k Q8_0 hidden vectors. The down projections and their weighted sum in one launch: the
// sum needs no buffer of k outputs and no second kernel.
#define MOE_DOWN_GROUP 4
extern "C" __global__ void moe_down_q(const unsigned long long* __restrict__ table, const int* __restrict__ ids,
                                      const float* __restrict__ weights, const uint8_t* __restrict__ hq,
                                      float* __restrict__ x, int dim, int hidden, int k, int type) {
    int r = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (r >= dim) return;
    long long rowBytes = quant_row_bytes(type, hidden), hqBytes = (long long)(hidden / QK) * BLOCK_BYTES;
    float sum = 0.0f;
    for (int j0 = 0; j0 < k; j0 += MOE_DOWN_GROUP) {
        const uint8_t* w[MOE_DOWN_GROUP];
        const uint8_t* xs[MOE_DOWN_GROUP];
#pragma unroll
        for (int i = 0; i < MOE_DOWN_GROUP; i++) { // each expert's row against its own hidden vector
            const uint8_t* down = j0 + i < k ? (const uint8_t*)table[3 * ids[j0 + i] + 2] : nullptr;
            w[i] = down == nullptr ? nullptr : down + r * rowBytes;
            xs[i] = hq + (j0 + i) * hqBytes;
        }
        float v[MOE_DOWN_GROUP];
        typed_rows_dot<MOE_DOWN_GROUP>(type, w, xs, hidden, v);
#pragma unroll
        for (int i = 0; i < MOE_DOWN_GROUP; i++) {
            if (j0 + i < k && table[3 * ids[j0 + i] + 2] != 0) sum = __fadd_rn(sum, __fmul_rn(v[i], weights[j0 + i]));
        }
    }
    if ((threadIdx.x & 31) == 0) x[r] += sum;
}
