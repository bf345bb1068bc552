package dev.lazarus.kt.placement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.ExpertPlacementView.TierStats;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.ExpertMatrix;
import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.tensor.NativeKernels;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The RAM tier is sized, budgeted and reported in the bytes its copies take, repacked ones included. */
class RamTierTest {

    /** ggml's Q4_K super-block against the packed one ({@code Q4KPacked}), and the packed Q6_K one ({@code Q6KPacked}). */
    static final long Q4K_BLOCK = 144, PACKED_Q6K_BLOCK = 276;
    /** The packed Q4_K super-block: the Java kernels' ({@code Q4KPacked}) or, where they load, the native 16-row one. */
    static final long PACKED_BLOCK = KernelConfig.fromSystemProperties().nativeSelected() ? 148 : 152;

    @TempDir
    Path dir;

    static ExpertMatrix matrix(GgmlType type, int rows, int cols, long seed) {
        Random rnd = new Random(seed);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) rnd.nextGaussian();
        }
        return new ExpertMatrix(type, MemorySegment.ofArray(GgmlCodec.encode(type, w)), rows, cols);
    }

    /** Q4_K gate and up that llama-server repacks (rows a multiple of 8), a Q6_K down: a Q4_K_M expert. */
    static ExpertWeights q4kmExpert() {
        return new ExpertWeights(matrix(GgmlType.Q4_K, 256, 256, 1), matrix(GgmlType.Q4_K, 256, 256, 2),
                matrix(GgmlType.Q6_K, 256, 256, 3));
    }

    /**
     * Fresh weights each run (the seed in every message), a Q6_K down of an odd row count (its last row a group of its
     * own in the packed order), and row ranges that start at an odd row.
     */
    @Test
    void aPackedCopyIsSizedAsAllocatedAndLargerThanTheFilesBlocks() {
        long seed = System.nanoTime();
        ExpertWeights w = new ExpertWeights(matrix(GgmlType.Q4_K, 256, 256, seed), matrix(GgmlType.Q4_K, 256, 256, seed + 1),
                matrix(GgmlType.Q6_K, 255, 256, seed + 2));
        long packedQ4k = 256L * PACKED_BLOCK; // 256 rows of one super-block each
        // Q6_K is repacked only where the Java kernels run it; where the native kernels load (and cover Q6_K) the
        // copy keeps ggml's blocks (NativeKernels' selection table)
        long q6k = KernelConfig.fromSystemProperties().nativeSelected() ? w.down().bytes() : 255L * PACKED_Q6K_BLOCK;
        long expected = 2 * packedQ4k + q6k;
        assertThat(w.gate().bytes()).isEqualTo(256L * Q4K_BLOCK);

        RamTier tier = new RamTier(true);
        assertThat(tier.bytes(w)).isEqualTo(expected).isGreaterThan(w.bytes());
        PlacedExpert placed = tier.load(w);
        try {
            assertThat(placed.heldBytes()).as("what the copy allocated").isEqualTo(expected);
            assertThat(placed.bytes()).as("bytes a computation reads, as stored (hit rates)").isEqualTo(w.bytes());
            float[] x = new float[256];
            Random rnd = new Random(seed);
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
            int start = 1 + 2 * rnd.nextInt(100), end = start + 1 + rnd.nextInt(255 - start);
            for (int[] range : new int[][] {{0, 256}, {start, end}}) {
                float[] copied = new float[256], inPlace = new float[256];
                placed.cpu().gate().matvec(x, copied, range[0], range[1]);
                w.gate().matrix().matvec(x, inPlace, range[0], range[1]);
                assertThat(copied).as("seed=%dL: the packed copy computes the stored matrix, rows %d..%d", seed, range[0], range[1])
                        .isEqualTo(inPlace);
                int downEnd = Math.min(range[1], 255);
                placed.cpu().down().matvec(x, copied, range[0], downEnd);
                w.down().matrix().matvec(x, inPlace, range[0], downEnd);
                assertThat(copied).as("seed=%dL: the packed Q6_K copy computes the stored matrix, rows %d..%d", seed, range[0], downEnd)
                        .isEqualTo(inPlace);
            }
        } finally {
            placed.release();
        }
    }

    @Test
    void plainCopiesAndOtherTypesTakeTheFilesBytes() {
        ExpertWeights w = q4kmExpert();
        RamTier plain = new RamTier(false);
        assertThat(plain.bytes(w)).isEqualTo(w.bytes());
        PlacedExpert placed = plain.load(w);
        try {
            assertThat(placed.heldBytes()).isEqualTo(w.bytes());
        } finally {
            placed.release();
        }
        ExpertWeights q8 = new ExpertWeights(matrix(GgmlType.Q8_0, 64, 256, 5), matrix(GgmlType.Q8_0, 64, 256, 6),
                matrix(GgmlType.Q8_0, 256, 64, 7));
        assertThat(new RamTier(true).bytes(q8)).isEqualTo(q8.bytes());
        // Q4_K that llama-server does not repack (rows not a multiple of 8) stays as stored
        ExpertWeights odd = new ExpertWeights(matrix(GgmlType.Q4_K, 12, 256, 8), matrix(GgmlType.Q4_K, 12, 256, 9),
                matrix(GgmlType.Q4_K, 12, 256, 10));
        assertThat(new RamTier(true).bytes(odd)).isEqualTo(odd.bytes());
    }

    @Test
    void budgetAndAdminViewCountTheBytesTheRamTierHolds() {
        // tiny qwen3moe (dim 256, expert FFN 256) with Q4_K weights: every expert matrix is packed in RAM
        Path gguf = SyntheticModels.write(SyntheticModels.tinyQwen3Moe().withWeightType(GgmlType.Q4_K), dir.resolve("q4k.gguf"));
        RamTier tier = new RamTier(true);
        try (Parallel parallel = Parallel.ofThreads(1); GgufFile file = GgufFile.open(gguf)) {
            Model model = Model.load(file, parallel);
            ExpertCatalog catalog = new ExpertCatalog(model.expertLayers());
            long stored = catalog.totalBytes();
            long packed = catalog.totalBytes(tier::bytes);
            assertThat(packed).as("packed copies are 152/144 (148/144 native) of the file's Q4_K blocks").isEqualTo(stored / Q4K_BLOCK * PACKED_BLOCK);

            // a byte budget of all experts' file bytes is a limit on memory: the larger copies do not all fit
            try (ExpertPlacement placement = ExpertPlacement.install(model, "q4k",
                    PlacementConfig.cpuOnly().withRam(new TierBudget.Bytes(stored)), null)) {
                int inRam = placement.current().count(Tier.RAM);
                assertThat(inRam).isLessThan(catalog.size()).isEqualTo((int) (stored / (packed / catalog.size())));
                assertThat(placement.heldBytes(Tier.RAM)).isEqualTo(inRam * (packed / catalog.size())).isLessThanOrEqualTo(stored);
                TierStats ram = placement.snapshot().tiers().get(1);
                assertThat(ram.tier()).isEqualTo("ram");
                assertThat(ram.experts()).isEqualTo(inRam);
                assertThat(ram.bytes()).isEqualTo(placement.heldBytes(Tier.RAM));
                assertThat(ram.budgetBytes()).isEqualTo(stored);
                TierStats mmap = placement.snapshot().tiers().get(2);
                assertThat(mmap.bytes()).isEqualTo((catalog.size() - inRam) * (stored / catalog.size()));
            }
            // a ratio still means that share of the experts
            try (ExpertPlacement placement = ExpertPlacement.install(model, "q4k",
                    PlacementConfig.cpuOnly().withRam(new TierBudget.Ratio(1)), null)) {
                assertThat(placement.current().count(Tier.RAM)).isEqualTo(catalog.size());
                assertThat(placement.ramBudget()).isEqualTo(packed);
                assertThat(placement.heldBytes(Tier.RAM)).isEqualTo(packed);
                assertThat(placement.snapshot().tiers().get(1).bytes()).isEqualTo(packed);
            }
        }
    }
}
