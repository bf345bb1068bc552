package dev.lazarus.kt.parallel;

/** Work on the index range {@code [start, end)}. */
@FunctionalInterface
public interface IntRangeBody {
    void run(int start, int end);
}
