package dev.lazarus.llamacpp;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.GeneratedTokens;
import dev.lazarus.backend.api.TokenPrefix;
import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Usage;
import dev.lazarus.llamacpp.http.LlamaServerClient;
import dev.lazarus.llamacpp.wire.PromptProgress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import reactor.core.publisher.Flux;

/**
 * Continues an interrupted chat answer on a llama-server of the same model from the exact token ids
 * generated so far, through llama-server's own {@code /completion}: the prompt is the chat's messages
 * as this server renders them ({@code /apply-template}) and tokenizes them ({@code /tokenize}, with
 * special tokens, as its chat endpoint does), followed by the answer's ids. The answer then goes on
 * as it would have without the cut; a trailing assistant message of the same text would be
 * tokenized anew, which need not give the same ids, and a chat template may render it differently
 * from a generated answer. The native stream is given back as chat chunks: text deltas, then the
 * finish ({@code length} at the token limit, else {@code stop}) and the usage of this call.
 */
final class TokenContinuation {

    /** Request fields the chat endpoint maps itself or that /completion names differently. */
    private static final Set<String> NOT_PASSED = Set.of("n_probs", "post_sampling_probs", "timings_per_token",
            "return_tokens", "stream", "prompt", "chat_template_kwargs");

    private final LlamaServerClient client;

    TokenContinuation(LlamaServerClient client) {
        this.client = client;
    }

    /**
     * Whether {@code request} is a continuation this class can take: a plain text answer (no tools,
     * no response format, one choice) whose text so far is its trailing assistant message.
     */
    static boolean takes(ChatCompletionRequest request) {
        List<ChatMessage> messages = request.messages();
        return messages.size() >= 2 && "assistant".equals(messages.getLast().role())
                && messages.getLast().toolCalls() == null
                && (request.tools() == null || request.tools().isEmpty())
                && request.responseFormat() == null
                && (request.n() == null || request.n() == 1);
    }

    Flux<ChatCompletionChunk> chat(ChatCompletionRequest request, TokenPrefix prefix, GeneratedTokens record) {
        List<ChatMessage> messages = request.messages().subList(0, request.messages().size() - 1);
        Map<String, Object> template = new LinkedHashMap<>();
        template.put("messages", messages);
        if (request.extra().get("chat_template_kwargs") != null) {
            template.put("chat_template_kwargs", request.extra().get("chat_template_kwargs"));
        }
        return client.postJson("/apply-template", template)
                .flatMap(rendered -> client.postJson("/tokenize", Map.of(
                        "content", rendered.path("prompt").asString(""), "add_special", true, "parse_special", true)))
                .flatMapMany(tokenized -> {
                    List<Integer> prompt = new ArrayList<>();
                    tokenized.path("tokens").forEach(id -> prompt.add(id.asInt()));
                    if (prompt.isEmpty()) {
                        return Flux.error(new BackendException(BackendErrorKind.UPSTREAM,
                                "llama-server tokenized the chat prompt to nothing"));
                    }
                    prompt.addAll(prefix.ids());
                    if (record != null) {
                        record.start(prefix.modelIdentity(), prefix.ids());
                    }
                    int[] recorded = {prefix.ids().size()};
                    Map<String, Object> body = body(request, prompt);
                    // its progress events (token id 0 each) are taken out before the record sees them
                    boolean progress = PromptProgress.ask(body);
                    return client.stream("/completion", body, NativeChunk.class,
                                    chunk -> chunk.stop(), NativeChunk::extraOrEmpty, false, progress)
                            .concatMapIterable(chunk -> {
                                record(chunk, record, recorded, prefix.ids().size());
                                return toChat(chunk, request.model());
                            });
                });
    }

    /** The /completion request: the token prompt, and the chat request's sampling settings under their native names. */
    private static Map<String, Object> body(ChatCompletionRequest request, List<Integer> prompt) {
        Map<String, Object> body = new LinkedHashMap<>();
        request.extra().forEach((key, value) -> {
            if (!NOT_PASSED.contains(key)) {
                body.put(key, value);
            }
        });
        body.put("prompt", prompt);
        body.put("stream", true);
        body.put("return_tokens", true);
        Integer limit = request.effectiveMaxTokens();
        body.put("n_predict", limit == null ? -1 : limit);
        putIfSet(body, "temperature", request.temperature());
        putIfSet(body, "top_p", request.topP());
        putIfSet(body, "seed", request.seed());
        putIfSet(body, "stop", request.stop());
        putIfSet(body, "presence_penalty", request.presencePenalty());
        putIfSet(body, "frequency_penalty", request.frequencyPenalty());
        putIfSet(body, "logit_bias", request.logitBias());
        return body;
    }

    private static void putIfSet(Map<String, Object> body, String key, Object value) {
        if (value != null) {
            body.put(key, value);
        }
    }

    /**
     * Adds the chunk's ids (a further cut goes on from all of them), or gives the record up where they
     * fall short of the tokens the server counts ({@code tokens_predicted}): llama-server sends no id
     * for a token whose text it held back as incomplete UTF-8.
     */
    private static void record(NativeChunk chunk, GeneratedTokens record, int[] recorded, int before) {
        if (record == null || recorded[0] < 0) {
            return;
        }
        if (chunk.tokens() != null) {
            chunk.tokens().forEach(record::add);
            recorded[0] += chunk.tokens().size();
        }
        if (chunk.tokensPredicted() != recorded[0] - before) {
            record.lost();
            recorded[0] = -1;
        }
    }

    /** A native chunk as chat chunks: its text; at the end, the finish and the usage. */
    private static List<ChatCompletionChunk> toChat(NativeChunk chunk, String model) {
        long created = System.currentTimeMillis() / 1000;
        List<ChatCompletionChunk> out = new ArrayList<>(3);
        if (chunk.content() != null && !chunk.content().isEmpty()) {
            out.add(ChatCompletionChunk.of(null, created, model, List.of(new ChatCompletionChunk.Choice(0,
                    ChatCompletionChunk.Delta.content(chunk.content()), null, null)), null));
        }
        if (chunk.stop()) {
            String finish = "limit".equals(chunk.stopType()) ? "length" : "stop";
            out.add(ChatCompletionChunk.of(null, created, model, List.of(new ChatCompletionChunk.Choice(0,
                    new ChatCompletionChunk.Delta(null, null, null, null), null, finish)), null));
            Map<String, Object> extra = new LinkedHashMap<>();
            if (chunk.extraOrEmpty().get("timings") != null) {
                extra.put("timings", chunk.extraOrEmpty().get("timings"));
            }
            out.add(new ChatCompletionChunk(null, ChatCompletionChunk.OBJECT, created, model, null, List.of(),
                    Usage.of(chunk.tokensEvaluated(), chunk.tokensPredicted()), extra));
        }
        return out;
    }

    /** One event of llama-server's native /completion stream. */
    record NativeChunk(
            String content,
            List<Integer> tokens,
            boolean stop,
            @JsonProperty("stop_type") String stopType,
            @JsonProperty("tokens_predicted") int tokensPredicted,
            @JsonProperty("tokens_evaluated") int tokensEvaluated,
            @JsonAnySetter Map<String, Object> extra) {

        Map<String, Object> extraOrEmpty() {
            return extra == null ? Map.of() : extra;
        }
    }
}
