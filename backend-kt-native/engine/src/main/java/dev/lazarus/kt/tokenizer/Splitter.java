package dev.lazarus.kt.tokenizer;

/**
 * One step of a pre-tokenizer: cuts each chunk of the text further. Chunks are runs of code
 * points given by their lengths; every code point stays in exactly one chunk, so the lengths
 * returned always add up to the lengths given.
 */
interface Splitter {

    IntList split(int[] codepoints, IntList chunkLengths);
}
