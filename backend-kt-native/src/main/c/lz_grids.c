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

/* How many kernel ids this library knows (not ISA-specific, so here): NativeKernels checks it at load. */
int lz_kernel_count(void) {
    return LZ_KERNELS;
}
