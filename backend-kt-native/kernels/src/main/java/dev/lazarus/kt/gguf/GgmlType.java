package dev.lazarus.kt.gguf;

/**
 * The tensor element types of ggml, with the ids, block sizes (elements per block) and type sizes
 * (bytes per block) that ggml defines. Ids that ggml retired (4, 5, 31-33, 36-38) are absent.
 * Every type is listed so that any GGUF file can be opened and sized; {@link #computable()} says
 * which ones this engine has kernels for.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q4_1(3, 32, 20),
    Q5_0(6, 32, 22),
    Q5_1(7, 32, 24),
    Q8_0(8, 32, 34),
    Q8_1(9, 32, 36),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110),
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    Q8_K(15, 256, 292),
    IQ2_XXS(16, 256, 66),
    IQ2_XS(17, 256, 74),
    IQ3_XXS(18, 256, 98),
    IQ1_S(19, 256, 50),
    IQ4_NL(20, 32, 18),
    IQ3_S(21, 256, 110),
    IQ2_S(22, 256, 82),
    IQ4_XS(23, 256, 136),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    IQ1_M(29, 256, 56),
    BF16(30, 1, 2),
    TQ1_0(34, 256, 54),
    TQ2_0(35, 256, 66),
    MXFP4(39, 32, 17);

    private static final GgmlType[] BY_ID = new GgmlType[64];

    static {
        for (GgmlType t : values()) {
            BY_ID[t.id] = t;
        }
    }

    private final int id;
    private final int blockSize;
    private final int typeSize;

    GgmlType(int id, int blockSize, int typeSize) {
        this.id = id;
        this.blockSize = blockSize;
        this.typeSize = typeSize;
    }

    public int id() {
        return id;
    }

    /** Elements per block. */
    public int blockSize() {
        return blockSize;
    }

    /** Bytes per block. */
    public int typeSize() {
        return typeSize;
    }

    /**
     * Bytes that {@code elements} values of this type occupy.
     *
     * @throws IllegalArgumentException when {@code elements} is not a whole number of blocks
     */
    public long bytesFor(long elements) {
        if (elements < 0 || elements % blockSize != 0) {
            throw new IllegalArgumentException(
                    "%d elements is not a multiple of the %s block size %d".formatted(elements, this, blockSize));
        }
        return elements / blockSize * typeSize;
    }

    /** Whether this engine has kernels for (and can dequantize) this type. */
    public boolean computable() {
        return encodable() || SubBlockQuants.covers(this) || TableQuants.covers(this) || GridQuants.covers(this);
    }

    /** Whether the writer ({@code GgufWriter}) can encode this type; the others come from llama-quantize. */
    public boolean encodable() {
        return switch (this) {
            case F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K -> true;
            default -> false;
        };
    }

    /**
     * The type with the given ggml id.
     *
     * @throws IllegalArgumentException for ids ggml does not define (or retired)
     */
    public static GgmlType byId(int id) {
        GgmlType t = id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
        if (t == null) {
            throw new IllegalArgumentException("unknown ggml type id " + id);
        }
        return t;
    }
}
