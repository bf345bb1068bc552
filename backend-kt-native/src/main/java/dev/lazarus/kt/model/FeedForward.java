package dev.lazarus.kt.model;

/** The feed-forward half of a block: dense SwiGLU or a mixture of experts. */
interface FeedForward {

    /** Returns the FFN output for each normalised input vector. */
    float[][] forward(float[][] xn);
}
