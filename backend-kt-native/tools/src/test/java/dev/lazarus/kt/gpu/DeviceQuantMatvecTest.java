package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The GPU's matrix-vector product on weights in their GGUF blocks (quants.cuh, run by the fake driver of
 * {@link FakeCudaDriverTest}) against the product of the same matrix decoded by {@link GgmlCodec} with the
 * activation the device quantized to Q8_0, decoded likewise: what each block type's unpacking, scales, mins and
 * offsets must give. Exact integer block sums scaled in float differ from the double reference by rounding only
 * (relative 1e-5 of the sum of |w·x|, measured up to 3e-7); a wrong nibble, scale or bit gives order 1e-2 and more.
 */
@ExtendWith(FakeCudaDriver.class)
class DeviceQuantMatvecTest {

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void blockTypesGiveTheDecodedProduct(GgmlType type) throws Exception {
        assertThat(LayerKernels.quantized(type)).isTrue();
        int rows = 6, cols = 768; // three K-quant super-blocks per row; rows not a multiple of the 4 warps
        Random random = new Random(type.id());
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) random.nextGaussian() * (1 + i % 7); // uneven sub-block ranges: scales and mins differ
        }
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) {
            x[i] = (float) random.nextGaussian() + (i % 3 == 0 ? 0.5f : 0f); // a non-zero block sum for the mins
        }
        byte[] packed = GgmlCodec.encode(type, w);
        Path kernels = Files.writeString(dir.resolve("kernels.ptx"), "// fake module: the fake driver ignores it\n");
        CudaDriver cu = CudaDriver.load(new StringBuilder()).orElseThrow();
        cu.init();
        try (CudaExpertTier tier = CudaExpertTier.open(cu, 0, kernels); Arena arena = Arena.ofConfined()) {
            cu.setCurrent(tier.context());
            MemorySegment stream = cu.createStream();
            LayerKernels k = new LayerKernels(cu, tier.module(), stream, arena);
            long q8Bytes = GgmlType.Q8_0.bytesFor(cols);
            long dW = cu.malloc(packed.length), dX = cu.malloc(4L * cols), dXq = cu.malloc(q8Bytes), dY = cu.malloc(4L * rows);
            MemorySegment h = cu.mallocHost(Math.max(packed.length, 4L * cols));
            try {
                MemorySegment.copy(MemorySegment.ofArray(packed), 0, h, 0, packed.length);
                cu.copyToDevice(dW, h, packed.length, stream);
                cu.synchronize(stream);
                MemorySegment.copy(x, 0, h, JAVA_FLOAT, 0, cols);
                cu.copyToDevice(dX, h, 4L * cols, stream);
                k.quantize(dX, dXq, cols);
                k.matvec(new DeviceMatrix(type, dW, rows, cols), dX, dXq, dY, 1f, false);
                cu.synchronize(stream);
                cu.copyToHost(h, dXq, q8Bytes, stream);
                cu.synchronize(stream);
                float[] xd = new float[cols];
                GgmlCodec.decode(GgmlType.Q8_0, h, 0, xd, 0, cols);
                cu.copyToHost(h, dY, 4L * rows, stream);
                cu.synchronize(stream);
                float[] wd = new float[rows * cols];
                GgmlCodec.decode(type, MemorySegment.ofArray(packed), 0, wd, 0, rows * cols);
                for (int r = 0; r < rows; r++) {
                    double expected = 0, scale = 0;
                    for (int c = 0; c < cols; c++) {
                        expected += (double) wd[r * cols + c] * xd[c];
                        scale += Math.abs((double) wd[r * cols + c] * xd[c]);
                    }
                    float actual = h.getAtIndex(JAVA_FLOAT, r);
                    assertThat(Math.abs(actual - expected)).as("%s row %d: %s against %s", type, r, actual, expected)
                            .isLessThanOrEqualTo(1e-5 * scale);
                }
            } finally {
                for (long p : new long[] {dW, dX, dXq, dY}) {
                    cu.free(p);
                }
                cu.freeHost(h);
                cu.destroyStream(stream);
            }
        }
    }
}
