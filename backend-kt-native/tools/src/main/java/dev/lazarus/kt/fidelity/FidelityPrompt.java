package dev.lazarus.kt.fidelity;

import java.util.Arrays;

/** One prompt of a measurement, as the token ids both implementations receive. */
public record FidelityPrompt(String name, int[] tokens) {

    public FidelityPrompt {
        if (tokens.length == 0) {
            throw new IllegalArgumentException("prompt " + name + " has no tokens");
        }
        tokens = tokens.clone();
    }

    @Override
    public int[] tokens() {
        return tokens.clone();
    }

    @Override
    public String toString() {
        return name + Arrays.toString(tokens);
    }
}
