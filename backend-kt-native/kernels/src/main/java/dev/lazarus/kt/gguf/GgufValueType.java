package dev.lazarus.kt.gguf;

/** The metadata value types of GGUF, with their on-disk ids. */
public enum GgufValueType {
    UINT8(0, 1),
    INT8(1, 1),
    UINT16(2, 2),
    INT16(3, 2),
    UINT32(4, 4),
    INT32(5, 4),
    FLOAT32(6, 4),
    BOOL(7, 1),
    STRING(8, -1),
    ARRAY(9, -1),
    UINT64(10, 8),
    INT64(11, 8),
    FLOAT64(12, 8);

    private static final GgufValueType[] BY_ID = values();

    private final int id;
    private final int size;

    GgufValueType(int id, int size) {
        this.id = id;
        this.size = size;
    }

    public int id() {
        return id;
    }

    /** Bytes of one value, or -1 for the variable-length STRING and ARRAY. */
    public int size() {
        return size;
    }

    /** The type with this id, or null when GGUF defines none. */
    static GgufValueType byIdOrNull(int id) {
        // the enum is declared in id order, so the ordinal is the id
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }
}
