package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgmlType;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The types a KV cache may store keys or values as: llama-server's {@code -ctk}/{@code -ctv} choices, under the same
 * names ({@code f16}, {@code q8_0}, ...). Values are converted as ggml-cpu's {@code set_rows} converts them
 * ({@link dev.lazarus.kt.tensor.CpuFromFloat}).
 */
public enum KvCacheType {
    F16(GgmlType.F16),
    BF16(GgmlType.BF16),
    Q8_0(GgmlType.Q8_0),
    Q4_0(GgmlType.Q4_0),
    Q4_1(GgmlType.Q4_1),
    IQ4_NL(GgmlType.IQ4_NL),
    Q5_0(GgmlType.Q5_0),
    Q5_1(GgmlType.Q5_1);

    private final GgmlType ggmlType;

    KvCacheType(GgmlType ggmlType) {
        this.ggmlType = ggmlType;
    }

    public GgmlType ggmlType() {
        return ggmlType;
    }

    /** The name llama-server's {@code -ctk}/{@code -ctv} and this engine's settings use. */
    public String settingName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** A block type (everything but F16 and BF16): llama.cpp then needs flash attention for such values. */
    public boolean quantized() {
        return ggmlType.blockSize() > 1;
    }

    /** Bytes {@code values} values take (a multiple of the block size). */
    public long bytesFor(int values) {
        return ggmlType.bytesFor(values);
    }

    /** The type named {@code name} (case-insensitive); throws with the accepted names. */
    public static KvCacheType parse(String name) {
        for (KvCacheType t : values()) {
            if (t.settingName().equalsIgnoreCase(name.trim())) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown KV cache type '" + name + "' (accepted: " + names() + ")");
    }

    /** The accepted names, comma-separated. */
    public static String names() {
        return Arrays.stream(values()).map(KvCacheType::settingName).collect(Collectors.joining(", "));
    }
}
