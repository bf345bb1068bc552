/* The grid I-quants' codebooks in the layout GridQuants.nativeTables writes (entries little-endian, as in ggml). */
#ifndef LZ_GRID_TABLES_H
#define LZ_GRID_TABLES_H
#include <stdint.h>

typedef struct {
    uint64_t iq2xxs[256];
    uint64_t iq2xs[512];
    uint64_t iq2s[1024];
    uint64_t iq1s[2048];
    uint32_t iq3xxs[256];
    uint32_t iq3s[512];
    uint8_t ksigns[128];
} lz_grids;

/* Set by lz_set_grid_tables (lz_grids.c). */
extern const lz_grids *lz_grid_tables;

#endif
