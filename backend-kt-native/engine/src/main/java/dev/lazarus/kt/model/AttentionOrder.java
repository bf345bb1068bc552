package dev.lazarus.kt.model;

/**
 * Which of llama.cpp's CPU attention orders the engine reproduces: the non-flash one (llama-server {@code -fa off}:
 * {@link AttentionKernel}) or flash attention ({@code -fa on}: {@link FlashAttentionKernel}). Flash attention splits
 * a decode step's cache across llama-server's threads from 512 cells on, so its order depends on that count
 * ({@code threads}, llama-server's {@code -t}).
 */
public record AttentionOrder(boolean flash, int threads) {

    /** llama-server {@code -fa off}. */
    public static final AttentionOrder NON_FLASH = new AttentionOrder(false, 1);

    public AttentionOrder {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be positive: " + threads);
        }
    }

    /** llama-server {@code -fa on -t threads}. */
    public static AttentionOrder flash(int threads) {
        return new AttentionOrder(true, threads);
    }

    @Override
    public String toString() {
        return flash ? "flash attention (" + threads + " threads)" : "non-flash attention";
    }
}
