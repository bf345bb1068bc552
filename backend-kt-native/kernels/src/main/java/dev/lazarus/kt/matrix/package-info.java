/**
 * Weight matrices: which kernels a matrix of a type, shape and use takes ({@link dev.lazarus.kt.matrix.KernelTable}),
 * the copies made at load, and the driver that runs the kernels over rows and batches
 * ({@link dev.lazarus.kt.matrix.KernelMatrix}).
 */
package dev.lazarus.kt.matrix;
