package dev.lazarus.kt.gpu;

import dev.lazarus.kt.gguf.GgmlType;

/** A weight matrix in device memory, in its GGUF block layout: {@code rows} × {@code cols} of {@code type}. */
record DeviceMatrix(GgmlType type, long data, int rows, int cols) {}
