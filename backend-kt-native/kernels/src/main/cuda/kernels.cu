// The one module the kt-native GPU code loads (setting `gpu-kernels`): every kernel of this folder, compiled
// together by scripts/device/gpu-check.sh (nvcc -ptx -arch=sm_90 -O3 kernels.cu -o kernels.ptx).
#include "experts.cu"
#include "layers.cu"
#include "mla.cu"
#include "moe.cu"
#include "prefill.cu"
