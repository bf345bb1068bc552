/** The low-bit types: Q2_K, Q3_K, IQ4_XS and the grid I-quants on 16- or 32-value sub-blocks; IQ4_NL and MXFP4 on a value table. */
package dev.lazarus.kt.quant.lowbit;
