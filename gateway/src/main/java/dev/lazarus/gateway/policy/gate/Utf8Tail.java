package dev.lazarus.gateway.policy.gate;

/** Whether bytes end as whole UTF-8, as the start of a character more bytes would complete, or neither. */
enum Utf8Tail {
    COMPLETE, INCOMPLETE, INVALID;

    static Utf8Tail of(byte[] bytes) {
        int i = 0;
        while (i < bytes.length) {
            int lead = bytes[i] & 0xFF;
            int length = lead < 0x80 ? 1 : lead >= 0xC2 && lead < 0xE0 ? 2 : lead >= 0xE0 && lead < 0xF0 ? 3
                    : lead >= 0xF0 && lead < 0xF5 ? 4 : 0;
            if (length == 0) {
                return INVALID;
            }
            for (int k = 1; k < length; k++) {
                if (i + k == bytes.length) {
                    return INCOMPLETE;
                }
                if ((bytes[i + k] & 0xC0) != 0x80) {
                    return INVALID;
                }
            }
            i += length;
        }
        return COMPLETE;
    }
}
