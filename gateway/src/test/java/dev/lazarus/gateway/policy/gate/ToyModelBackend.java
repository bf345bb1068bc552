package dev.lazarus.gateway.policy.gate;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.BackendDescriptor;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionRequest;
import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.backend.api.openai.Usage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A tiny deterministic language model behind the SPI: its next-token distribution over a byte-level
 * vocabulary is a function of its seed and the bytes so far (the prompt, then a trailing assistant
 * message it continues). Two with the same seed compute the same thing; another seed is another
 * model. Its {@link Style} can also make it answer "é" in two byte tokens (0xC3, then 0xA9: a token
 * that starts a character), or stray bytes that are no UTF-8 at all, as random-weight models do.
 */
final class ToyModelBackend implements InferenceBackend {

    /** The vocabulary, as bytes; the last two are the halves of "é". */
    private static final List<byte[]> VOCAB = List.of(bytes("a"), bytes("b"), bytes("c"), bytes(" "), bytes("the"),
            bytes("x"), bytes("."), bytes("!"), new byte[] {(byte) 0xC3}, new byte[] {(byte) 0xA9},
            new byte[] {(byte) 0x89}, new byte[0]);
    private static final int HALF1 = 8;
    private static final int HALF2 = 9;
    private static final int STRAY = 10;
    /** A control token: no text (a chat API shows nothing of it). */
    private static final int CONTROL = 11;

    /** What it says: seeded text, "ééé...", "a" after every stray byte 0x89, or control tokens only. */
    enum Style { TEXT, E_ACUTE, STRAY_BYTES, CONTROL_ONLY }

    /**
     * How it streams: every token with its logprobs; as llama-server does, text and logprobs only once a character is
     * whole (a token that starts one sends nothing, the one completing it sends both, an unfinished one at the end
     * is dropped); no logprobs; or not at all.
     */
    enum Mode { NORMAL, WHOLE_CHARACTERS, NO_LOGPROBS_SENT, FAILS }

    private final String id;
    private final long seed;
    private final Style style;
    private final BackendCapabilities capabilities;
    private final Mode mode;
    final AtomicInteger calls = new AtomicInteger();
    /** What its model metadata states (attention settings, as kt-native and llamacpp backends state them). */
    private java.util.Map<String, Object> facts = java.util.Map.of();

    ToyModelBackend(String id, long seed, Style style, BackendCapabilities capabilities, Mode mode) {
        this.id = id;
        this.seed = seed;
        this.style = style;
        this.capabilities = capabilities;
        this.mode = mode;
    }

    static ToyModelBackend of(String id, long seed) {
        return new ToyModelBackend(id, seed, Style.TEXT, BackendCapabilities.all(), Mode.NORMAL);
    }

    @Override
    public String id() {
        return id;
    }

    /** This backend, its model metadata stating {@code facts}. */
    ToyModelBackend stating(java.util.Map<String, Object> facts) {
        this.facts = java.util.Map.copyOf(facts);
        return this;
    }

    @Override
    public BackendDescriptor describe() {
        return new BackendDescriptor(id, "toy", List.of(new ModelInfo("toy", "tests", 0, facts)), capabilities);
    }

    @Override
    public Mono<BackendHealth> health() {
        return Mono.just(BackendHealth.up());
    }

    @Override
    public Flux<ChatCompletionChunk> chat(ChatCompletionRequest request) {
        calls.incrementAndGet();
        if (mode == Mode.FAILS) {
            return Flux.error(BackendException.unavailable("toy " + id + " is down"));
        }
        // as a chat template renders it: the turns, then the assistant's turn, continued when the last message is one
        List<ChatMessage> messages = request.messages();
        boolean prefill = messages.getLast().role().equals("assistant");
        ByteArrayOutputStream context = new ByteArrayOutputStream();
        for (ChatMessage m : prefill ? messages.subList(0, messages.size() - 1) : messages) {
            context.writeBytes(bytes(m.role() + ":" + m.text() + "|"));
        }
        context.writeBytes(bytes("assistant:" + (prefill ? messages.getLast().text() : "")));
        List<ChatCompletionChunk> chunks = new ArrayList<>();
        int n = request.maxTokens();
        List<Logprobs.TokenLogprob> held = new ArrayList<>();
        ByteArrayOutputStream heldBytes = new ByteArrayOutputStream();
        for (int i = 0; i < n; i++) {
            double[] logprobs = logprobs(context.toByteArray());
            int best = argmax(logprobs);
            context.writeBytes(VOCAB.get(best));
            held.add(new Logprobs.TokenLogprob(text(best), logprobs[best], list(VOCAB.get(best)),
                    top(logprobs, request.topLogprobs())));
            heldBytes.writeBytes(VOCAB.get(best));
            if (mode == Mode.WHOLE_CHARACTERS && Utf8Tail.of(heldBytes.toByteArray()) == Utf8Tail.INCOMPLETE) {
                continue;
            }
            Logprobs lp = mode == Mode.NO_LOGPROBS_SENT ? null : new Logprobs(List.copyOf(held));
            chunks.add(ChatCompletionChunk.of("toy", 1, "toy", List.of(new ChatCompletionChunk.Choice(0,
                    ChatCompletionChunk.Delta.content(heldBytes.toString(StandardCharsets.UTF_8)), lp, null)), null));
            held.clear();
            heldBytes.reset();
        }
        chunks.add(ChatCompletionChunk.of("toy", 1, "toy", List.of(), Usage.of(1, n)));
        return Flux.fromIterable(chunks);
    }

    @Override
    public Flux<Completion> completion(CompletionRequest request) {
        return Flux.error(BackendException.invalidRequest("no completions", "prompt"));
    }

    @Override
    public void close() {}

    private double[] logprobs(byte[] context) {
        double[] logits = new double[VOCAB.size()];
        byte last = context.length == 0 ? 0 : context[context.length - 1];
        switch (style) {
            case E_ACUTE -> {
                Arrays.fill(logits, -5);
                logits[last == (byte) 0xC3 ? HALF2 : HALF1] = 5;
            }
            case STRAY_BYTES -> {
                Arrays.fill(logits, -5);
                // a stray byte reaches it back as U+FFFD (EF BF BD) when the answer is continued
                logits[last == (byte) 0x89 || last == (byte) 0xBD ? 0 : STRAY] = 5;
            }
            case TEXT -> {
                Random random = new Random(seed * 1_000_003L + Arrays.hashCode(context));
                for (int i = 0; i < HALF1; i++) {
                    logits[i] = 3 * random.nextGaussian();
                }
                logits[HALF1] = logits[HALF2] = logits[STRAY] = logits[CONTROL] = -30; // plain text only
            }
            case CONTROL_ONLY -> {
                Arrays.fill(logits, -5);
                logits[CONTROL] = 5;
            }
        }
        double max = Arrays.stream(logits).max().orElseThrow();
        double sum = Arrays.stream(logits).map(l -> Math.exp(l - max)).sum();
        return Arrays.stream(logits).map(l -> l - max - Math.log(sum)).toArray();
    }

    private static List<Logprobs.TopLogprob> top(double[] logprobs, Integer n) {
        return IntStream.range(0, logprobs.length).boxed()
                .sorted(Comparator.comparingDouble(i -> -logprobs[i]))
                .limit(n == null ? 0 : n)
                .map(i -> new Logprobs.TopLogprob(text(i), logprobs[i], list(VOCAB.get(i))))
                .toList();
    }

    private static int argmax(double[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) {
            if (values[i] > values[best]) {
                best = i;
            }
        }
        return best;
    }

    private static String text(int token) {
        return new String(VOCAB.get(token), StandardCharsets.UTF_8);
    }

    private static List<Integer> list(byte[] raw) {
        List<Integer> out = new ArrayList<>();
        for (byte b : raw) {
            out.add(b & 0xFF);
        }
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
