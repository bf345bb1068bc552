package dev.lazarus.kt.gpu;

/** A CUDA driver call failed; the message names the call and the driver's error. */
public final class CudaException extends RuntimeException {

    public CudaException(String message) {
        super(message);
    }
}
