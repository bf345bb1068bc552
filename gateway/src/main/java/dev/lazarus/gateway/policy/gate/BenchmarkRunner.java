package dev.lazarus.gateway.policy.gate;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.gateway.routing.RouteTarget;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One call of the benchmark protocol, straight through the backend SPI (no routing, breakers or
 * failover in between: the gate measures the backend, not the gateway). The protocol's requests
 * are non-streaming for the client, but every SPI call is a stream, which is what lets one call
 * give both the time to first token and the generation speed. The requests are greedy unless the
 * job's extra fields say otherwise: a backend's default sampling (llama-server's and kt-native's
 * temperature 0.8) can end a run at its first token, which is no failure of the backend but was
 * counted as one, and greedy paths give the candidate and the oracle runs of the same length.
 */
public final class BenchmarkRunner {

    /** The decision gate's fixed prompts (docs/configuration.md, "Decision gate"). */
    public static final List<String> PROMPTS = List.of(
            "Explain quantum entanglement in simple terms.",
            "Write a Python function to find prime numbers.",
            "What are the key principles of distributed systems?");

    private static final double NANOS_PER_SECOND = 1e9;

    private final int maxTokens;
    private final Duration callTimeout;

    public BenchmarkRunner(int maxTokens, Duration callTimeout) {
        this.maxTokens = maxTokens;
        this.callTimeout = callTimeout;
    }

    /** Runs one prompt once; a failure is a result, never an exception. */
    public RunResult run(RouteTarget target, String prompt, int run, Map<String, Object> extra) {
        ChatCompletionRequest.Builder builder = ChatCompletionRequest.builder()
                .model(target.backendModel())
                .messages(List.of(ChatMessage.user(prompt)))
                .maxTokens(maxTokens);
        builder.temperature(extra.get("temperature") instanceof Number t ? t.doubleValue() : 0.0);
        extra.forEach((key, value) -> {
            if (!key.equals("temperature")) {
                builder.extra(key, value);
            }
        });
        ChatCompletionRequest request = builder.build().asUsageStream();
        Timing timing = new Timing(System.nanoTime());
        try {
            target.backend().chat(request)
                    .doOnNext(timing::chunk)
                    .timeout(callTimeout)
                    .blockLast(callTimeout.plusSeconds(5));
        } catch (RuntimeException e) {
            return RunResult.failed(run, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        }
        return timing.result(run, System.nanoTime());
    }

    /** Timestamps of one call's chunks. */
    private static final class Timing {
        private final long start;
        private long firstToken = -1;
        private long lastToken = -1;
        private int contentChunks;
        private int usageTokens = -1;

        Timing(long start) {
            this.start = start;
        }

        void chunk(ChatCompletionChunk chunk) {
            long now = System.nanoTime();
            boolean content = chunk.choices().stream().anyMatch(c -> c.delta() != null
                    && (nonEmpty(c.delta().content()) || nonEmpty(c.delta().reasoningContent())));
            if (content) {
                if (firstToken < 0) {
                    firstToken = now;
                }
                lastToken = now;
                contentChunks++;
            }
            if (chunk.usage() != null) {
                usageTokens = chunk.usage().completionTokens();
            }
        }

        RunResult result(int run, long end) {
            int tokens = usageTokens >= 0 ? usageTokens : contentChunks;
            if (tokens == 0 || firstToken < 0) {
                return RunResult.failed(run, "no tokens generated");
            }
            double tps = tokens >= 2 && lastToken > firstToken
                    ? (tokens - 1) * NANOS_PER_SECOND / (lastToken - firstToken)
                    : tokens * NANOS_PER_SECOND / Math.max(1, end - start);
            return new RunResult(run, true, tps, (firstToken - start) / 1e6, tokens, null);
        }

        private static boolean nonEmpty(String s) {
            return s != null && !s.isEmpty();
        }
    }
}
