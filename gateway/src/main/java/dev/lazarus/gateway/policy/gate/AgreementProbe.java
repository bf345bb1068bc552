package dev.lazarus.gateway.policy.gate;

import dev.lazarus.backend.api.BackendCapabilities;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Logprobs.TokenLogprob;
import dev.lazarus.gateway.routing.RouteTarget;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Measures {@link OracleAgreement} through the backend SPI, so it works for any candidate that
 * reports logprobs and continues a trailing assistant message (kt-native, llama-server, an
 * OpenAI-compatible server that does both). At each position the oracle and then the candidate
 * are asked for one token (temperature 0, top-5 logprobs) on the same conversation: the prompt,
 * then the oracle's greedy answer so far as the assistant's unfinished message. Asking the oracle
 * again at each position, instead of reading its logprobs from one long answer, gives both exactly
 * the same input: the text of the path is tokenised again by each, and a greedy token sequence
 * need not be the one its text tokenises into.
 */
public final class AgreementProbe {

    /** Tokens that may make up one UTF-8 character (a byte-level vocabulary splits it up to four ways). */
    private static final int CHARACTER_TOKENS = 4;

    private final int forcedTokens;
    private final Duration callTimeout;

    /** @param forcedTokens positions per prompt: the length of the oracle's path that is forced */
    public AgreementProbe(int forcedTokens, Duration callTimeout) {
        this.forcedTokens = forcedTokens;
        this.callTimeout = callTimeout;
    }

    /** The calls a measurement makes at most, for a job's progress. */
    public int maxCalls(int prompts) {
        return 4 * forcedTokens * prompts; // each side may ask twice at a position (see firstTokens)
    }

    /** Never throws: what keeps it from measuring is the reason of a result that is not measured. */
    public OracleAgreement measure(RouteTarget candidate, RouteTarget oracle, List<String> prompts,
            Map<String, Object> extra, Runnable onCall) {
        Optional<String> unscorable = unscorable(candidate, "candidate").or(() -> unscorable(oracle, "oracle"))
                .or(() -> misaligned(candidate, oracle));
        if (unscorable.isPresent()) {
            return OracleAgreement.notMeasured(unscorable.get());
        }
        List<OracleAgreement.PromptAgreement> scored = new ArrayList<>();
        try {
            for (String prompt : prompts) {
                scored.add(new Walk(candidate, oracle, prompt, extra, onCall).run());
            }
        } catch (NotScorable e) {
            return OracleAgreement.notMeasured(e.getMessage());
        } catch (RuntimeException e) {
            return OracleAgreement.notMeasured("the measurement failed: " + (e.getMessage() == null
                    ? e.getClass().getSimpleName() : e.getMessage()));
        }
        return OracleAgreement.of(scored);
    }

    private static Optional<String> unscorable(RouteTarget target, String role) {
        BackendCapabilities caps = target.backend().describe().capabilities();
        if (!caps.logprobs()) {
            return Optional.of("the " + role + " '" + target.backendId() + "' does not report logprobs");
        }
        if (!caps.assistantPrefill()) {
            return Optional.of("the " + role + " '" + target.backendId()
                    + "' cannot continue an assistant message (assistant prefill)");
        }
        return Optional.empty();
    }

    /**
     * Settings that change the arithmetic of attention, as each backend states them in its model metadata
     * ({@code flash_attention}, {@code cache_type_k}, {@code cache_type_v}: a kt-native backend always, a llamacpp
     * backend for the llama-server it starts; llama-server's {@code /props} does not report them). Where both state
     * one and they differ, the probe cannot align them (a backend's settings are fixed at load) and does not measure:
     * the agreement would count the other attention order or cache rounding as disagreement. Unstated: compared as
     * they come.
     */
    static Optional<String> misaligned(RouteTarget candidate, RouteTarget oracle) {
        Map<String, Object> theirs = attentionFacts(oracle), ours = attentionFacts(candidate);
        List<String> differences = new ArrayList<>();
        for (String key : List.of("flash_attention", "cache_type_k", "cache_type_v")) {
            Object o = theirs.get(key), c = ours.get(key);
            if (o != null && c != null && !String.valueOf(o).equalsIgnoreCase(String.valueOf(c))) {
                differences.add(key + " " + c + " on the candidate, " + o + " on the oracle");
            }
        }
        return differences.isEmpty() ? Optional.empty() : Optional.of("the candidate '" + candidate.backendId()
                + "' and the oracle '" + oracle.backendId() + "' compute attention differently ("
                + String.join(", ", differences) + "): set the candidate like the oracle; their agreement would "
                + "measure that difference, not the candidate");
    }

    private static Map<String, Object> attentionFacts(RouteTarget target) {
        return target.backend().describe().models().stream()
                .filter(m -> m.id().equals(target.backendModel())).findFirst()
                .or(() -> target.backend().describe().models().stream().findFirst())
                .map(m -> m.metadata() == null ? Map.<String, Object>of() : m.metadata()).orElse(Map.of());
    }

    /** One prompt's walk along the oracle's greedy path. */
    private final class Walk {
        private final RouteTarget candidate;
        private final RouteTarget oracle;
        private final String prompt;
        private final Map<String, Object> extra;
        private final Runnable onCall;
        private final StringBuilder path = new StringBuilder();
        private final PromptScore score = new PromptScore();

        Walk(RouteTarget candidate, RouteTarget oracle, String prompt, Map<String, Object> extra, Runnable onCall) {
            this.candidate = candidate;
            this.oracle = oracle;
            this.prompt = prompt;
            this.extra = extra;
            this.onCall = onCall;
        }

        OracleAgreement.PromptAgreement run() {
            int position = 0;
            String note = null;
            while (position < forcedTokens) {
                List<ChatMessage> messages = conversation();
                List<TokenLogprob> next = firstTokens(oracle, messages, "oracle");
                if (next.isEmpty()) {
                    note = "the oracle ended its answer after " + position + " tokens";
                    break;
                }
                List<TokenLogprob> theirs = firstTokens(candidate, messages, "candidate");
                score.add(position, next.getFirst(), theirs.isEmpty() ? null : theirs.getFirst());
                int before = path.length();
                position += extend(next, messages);
                if (path.length() == before) {
                    // a token without text (a control token the chat API does not show): the conversation would
                    // not move on, and the same position would be scored again and again
                    note = "the oracle's token at position " + position + " has no text; the path ends there";
                    break;
                }
            }
            return score.result(prompt, path.toString(), note);
        }

        /**
         * Appends the oracle's token to the path. A token that starts a character is completed with
         * the oracle's following tokens (asked for at once), which are forced but not scored. Bytes
         * that are no UTF-8 at all (a random-weight model makes them) go on as U+FFFD: the path must
         * be text, and both backends still see the same text. Returns the tokens appended.
         */
        private int extend(List<TokenLogprob> answer, List<ChatMessage> messages) {
            ByteArrayOutputStream pending = new ByteArrayOutputStream();
            pending.writeBytes(PromptScore.bytes(answer.getFirst().token(), answer.getFirst().bytes()));
            int appended = 1;
            if (Utf8Tail.of(pending.toByteArray()) == Utf8Tail.INCOMPLETE) {
                List<TokenLogprob> more = answer.size() > 1 ? answer : tokens(oracle, messages, CHARACTER_TOKENS, "oracle");
                for (int i = 1; i < more.size() && Utf8Tail.of(pending.toByteArray()) == Utf8Tail.INCOMPLETE; i++) {
                    pending.writeBytes(PromptScore.bytes(more.get(i).token(), more.get(i).bytes()));
                    appended++;
                }
            }
            path.append(pending.toString(StandardCharsets.UTF_8));
            return appended;
        }

        private List<ChatMessage> conversation() {
            return path.isEmpty() ? List.of(ChatMessage.user(prompt))
                    : List.of(ChatMessage.user(prompt), ChatMessage.assistant(path.toString()));
        }

        /**
         * The next token with its logprobs, and the tokens completing its character when it is the first byte of
         * one: a server that streams text only per whole character (llama-server) sends a lone partial byte with
         * neither text nor logprobs, so an empty one-token answer is asked again for a whole character before it
         * counts as the end of the answer.
         */
        private List<TokenLogprob> firstTokens(RouteTarget target, List<ChatMessage> messages, String role) {
            List<TokenLogprob> one = tokens(target, messages, 1, role);
            return one.isEmpty() ? tokens(target, messages, CHARACTER_TOKENS, role) : one;
        }

        /** The tokens of one greedy call with their logprobs; empty when it generated none. */
        private List<TokenLogprob> tokens(RouteTarget target, List<ChatMessage> messages, int maxTokens, String role) {
            ChatCompletionRequest.Builder builder = ChatCompletionRequest.builder();
            extra.forEach(builder::extra);
            ChatCompletionRequest request = builder.model(target.backendModel()).messages(messages)
                    .maxTokens(maxTokens).temperature(0.0).logprobs(true).topLogprobs(PromptScore.TOP)
                    .build().asUsageStream();
            List<ChatCompletionChunk> chunks;
            try {
                chunks = target.backend().chat(request).timeout(callTimeout).collectList()
                        .block(callTimeout.plusSeconds(5));
            } catch (RuntimeException e) {
                throw new NotScorable("the " + role + " '" + target.backendId() + "' failed: "
                        + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
            } finally {
                onCall.run();
            }
            List<TokenLogprob> tokens = new ArrayList<>();
            boolean content = false;
            for (ChatCompletionChunk chunk : chunks == null ? List.<ChatCompletionChunk>of() : chunks) {
                for (ChatCompletionChunk.Choice choice : chunk.choices()) {
                    content |= choice.delta() != null && choice.delta().content() != null
                            && !choice.delta().content().isEmpty();
                    if (choice.index() == 0 && choice.logprobs() != null && choice.logprobs().content() != null) {
                        tokens.addAll(choice.logprobs().content());
                    }
                }
            }
            if (tokens.isEmpty() && content) {
                throw new NotScorable("the " + role + " '" + target.backendId() + "' generated text without logprobs");
            }
            return tokens;
        }
    }

    /** The measurement cannot go on, for a reason that is not a failure of the call. */
    private static final class NotScorable extends RuntimeException {
        NotScorable(String message) {
            super(message, null, false, false);
        }
    }
}
