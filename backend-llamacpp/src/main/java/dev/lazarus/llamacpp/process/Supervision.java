package dev.lazarus.llamacpp.process;

import java.time.Duration;
import java.util.List;

/**
 * How to run llama-server ourselves.
 *
 * @param binary             path to llama-server (as seen after the prefix, e.g. inside a chroot)
 * @param commandPrefix      words put before the binary: {@code chroot DIR}, a wrapper script
 * @param model              GGUF path passed as {@code -m}; null when extra-args choose the model
 * @param ctxSize            {@code -c}; 0 to leave llama-server's default
 * @param threads            {@code -t}; 0 for the default
 * @param gpuLayers          {@code -ngl}; -1 for the default
 * @param nCpuMoe            {@code --n-cpu-moe}; -1 to leave it out
 * @param host               {@code --host}
 * @param port               {@code --port}; chosen once from the free ports when not configured
 * @param extraArgs          appended verbatim
 * @param startupTimeout     how long one start may take to answer /health 200 before it is killed
 * @param healthPollInterval how often /health is asked while starting
 * @param restartBackoff     the first delay before a restart; doubled after each failed start
 * @param restartBackoffMax  the cap on that delay
 * @param stopGracePeriod    between SIGTERM and SIGKILL
 */
public record Supervision(
        String binary,
        List<String> commandPrefix,
        String model,
        int ctxSize,
        int threads,
        int gpuLayers,
        int nCpuMoe,
        String host,
        int port,
        List<String> extraArgs,
        Duration startupTimeout,
        Duration healthPollInterval,
        Duration restartBackoff,
        Duration restartBackoffMax,
        Duration stopGracePeriod) {

    public Supervision {
        commandPrefix = List.copyOf(commandPrefix);
        extraArgs = List.copyOf(extraArgs);
    }
}
