/*
 * The grid I-quants' codebooks (lz_grid.h): Java loads them once from iquant-grids.bin into a global arena in
 * lz_grids' layout (dev.lazarus.kt.gguf.GridQuants.nativeTables) and hands their address here before any kernel runs,
 * so that the tables live in one place (the resource), not twice in C source.
 */
#include "lz_grid_tables.h"
#include "lz_kernels.h"

const lz_grids *lz_grid_tables;

void lz_set_grid_tables(const void *tables) {
    lz_grid_tables = (const lz_grids *) tables;
}

/* The name of kernel id (NULL past the last): NativeKernels compares them with its own at load. */
const char *lz_kernel_name(int id) {
    static const char *const names[] = {
#define LZ_KERNEL_NAME(name) #name,
        LZ_KERNEL_LIST(LZ_KERNEL_NAME)
#undef LZ_KERNEL_NAME
    };
    return id >= 0 && id < LZ_KERNELS ? names[id] : 0;
}
