package dev.lazarus.kt.testsupport;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * An importance matrix for {@code llama-quantize --imatrix}, which the IQ1/IQ2/IQ3_XXS types require. Debian's
 * llama.cpp packages ship no {@code llama-imatrix} (neither llama.cpp-tools nor llama.cpp-examples, 0.7.0+dfsg-2), so
 * the tests write one themselves, in llama.cpp's legacy {@code .dat} format (what {@code common_imatrix_load} falls
 * back to when the file is not GGUF): {@code i32 n_entries}, then per entry {@code i32 name length, name, i32 ncall,
 * i32 nval, f32 values[nval]}.
 *
 * <p>The values are a documented deterministic choice, not activation statistics: for each weight matrix (each expert
 * of a 3-D one) and input column j, {@code 1e-3 + mean over rows of w_ij²}. That weights columns by their own energy,
 * which is enough for llama-quantize's weighted searches to run the imatrix code path on every tensor; the parity
 * tests compare the engine with llama-server on whatever blocks come out, so the choice does not affect what they
 * hold.
 */
public final class ImportanceMatrix {

    private ImportanceMatrix() {
    }

    /** Writes the importance matrix of the F32/F16 model {@code model} to {@code out} and returns {@code out}. */
    public static Path write(Path model, Path out) {
        List<String> names = new ArrayList<>();
        List<float[]> values = new ArrayList<>();
        try (GgufFile file = GgufFile.open(model)) {
            for (GgufTensorInfo t : file.tensors()) {
                if (t.rank() < 2 || !t.name().endsWith(".weight")) {
                    continue;
                }
                int cols = Math.toIntExact(t.dim(0)), rows = Math.toIntExact(t.dim(1));
                int slices = t.rank() > 2 ? Math.toIntExact(t.dim(2)) : 1;
                float[] w = new float[cols * rows];
                float[] importance = new float[cols * slices];
                long bytes = t.type().bytesFor((long) cols * rows);
                for (int e = 0; e < slices; e++) {
                    GgmlCodec.decode(t.type(), file.data(t), bytes * e, w, 0, cols * rows);
                    for (int j = 0; j < cols; j++) {
                        double sum = 0;
                        for (int r = 0; r < rows; r++) {
                            sum += (double) w[r * cols + j] * w[r * cols + j];
                        }
                        importance[e * cols + j] = (float) (1e-3 + sum / rows);
                    }
                }
                names.add(t.name());
                values.add(importance);
            }
        }
        int size = 4;
        for (int i = 0; i < names.size(); i++) {
            size += 12 + names.get(i).getBytes(StandardCharsets.UTF_8).length + 4 * values.get(i).length;
        }
        ByteBuffer buf = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(names.size());
        for (int i = 0; i < names.size(); i++) {
            byte[] name = names.get(i).getBytes(StandardCharsets.UTF_8);
            buf.putInt(name.length).put(name).putInt(1).putInt(values.get(i).length);
            for (float v : values.get(i)) {
                buf.putFloat(v);
            }
        }
        buf.flip();
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}
