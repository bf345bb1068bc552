package dev.lazarus.kt.tensor;

/**
 * The super-block order of the RAM tier's packed layouts ({@code Q4KPacked}, {@code Q6KPacked}): rows in groups of
 * {@link #group} (the last group holds what is left, one row up), the rows of a group interleaved super-block by
 * super-block: super-block b of each of its rows, then b + 1 of each. The decode kernels take rows in pairs
 * ({@code Q4KInt16Kernel}, {@code Q4KPackedKernel} (bench sources), {@code Q6KPackedKernel}); in groups of two (the default,
 * {@code WeightMatrices.PACKED_GROUP}) a pair is one sequential stream of quants and one of headers, where
 * rows laid one after another (groups of one) give a thread four streams that restart every row; from DRAM that is
 * worth a third more bandwidth a thread on 4096 columns (docs/benchmarks.md#kernel-findings). A row without its pair
 * (the odd last row, the first of a range that starts at an odd row) steps over its group.
 *
 * <p>Super-block b of row r is super-block {@link #block}{@code (r, b)} of the layout: its quants and its header
 * lie at that index times their sizes, each in its own region. Kernels are handed a row's offset as
 * {@code KernelMatrix} forms it, {@code r · blocksPerRow · quantBytes} ({@link #row}).
 *
 * @param group rows per group (a power of two; 1: row after row)
 * @param rows rows of the matrix
 * @param blocksPerRow super-blocks per row
 */
public record RowGroups(int group, int rows, int blocksPerRow) {

    public RowGroups {
        if (Integer.bitCount(group) != 1 || rows < 1 || blocksPerRow < 1) {
            throw new IllegalArgumentException("groups of %d rows of %d × %d super-blocks".formatted(group, rows, blocksPerRow));
        }
    }

    /** Super-blocks of the matrix. */
    public long blocks() {
        return (long) rows * blocksPerRow;
    }

    /** Index of super-block b of row {@code row}. */
    public long block(int row, int b) {
        int first = row & -group;
        return (long) first * blocksPerRow + (long) b * (Math.min(group, rows - first)) + (row - first);
    }

    /** Super-blocks from one of the row's super-blocks to its next: the size of its group. */
    public int stride(int row) {
        return Math.min(group, rows - (row & -group));
    }

    /** The row whose kernel offset ({@code row · blocksPerRow · quantBytes}) is {@code offset}. */
    public int row(long offset, int quantBytes) {
        return (int) (offset / ((long) blocksPerRow * quantBytes));
    }
}
