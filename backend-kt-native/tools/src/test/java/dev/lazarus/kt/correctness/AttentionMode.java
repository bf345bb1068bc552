package dev.lazarus.kt.correctness;

import dev.lazarus.kt.model.AttentionOrder;

/**
 * The attention orders the parity suites hold the engine to: llama-server's {@code -fa off} and {@code -fa on}, each
 * against the engine configured alike. llama-server runs on one thread there ({@link LlamaReference}), which is the
 * split of a flash-attention decode step the engine then reproduces.
 */
enum AttentionMode {
    OFF, ON;

    /** llama-server's {@code -fa} value. */
    String flag() {
        return this == ON ? "on" : "off";
    }

    /** The engine's order against llama-server on {@code threads} threads. */
    AttentionOrder order(int threads) {
        return this == ON ? AttentionOrder.flash(threads) : AttentionOrder.NON_FLASH;
    }

    @Override
    public String toString() {
        return "-fa " + flag();
    }
}
