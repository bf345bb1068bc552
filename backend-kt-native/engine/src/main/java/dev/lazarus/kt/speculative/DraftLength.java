package dev.lazarus.kt.speculative;

/**
 * How long a draft may be: at most {@code max} tokens, and one shorter than {@code min} is not verified
 * (llama-server's {@code --spec-draft-n-max} and {@code --spec-draft-n-min}).
 */
public record DraftLength(int max, int min) {

    public DraftLength {
        if (max < 1 || min < 0) {
            throw new IllegalArgumentException("the draft length must be at least 1 and its minimum at least 0, got max "
                    + max + ", min " + min);
        }
    }
}
