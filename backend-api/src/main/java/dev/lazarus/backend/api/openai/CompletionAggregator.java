package dev.lazarus.backend.api.openai;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Folds a legacy completion chunk stream into one {@link Completion}. Not thread-safe. */
public final class CompletionAggregator {

    private String id;
    private long created;
    private String model;
    private Usage usage;
    private final Map<Integer, StringBuilder> texts = new TreeMap<>();
    private final Map<Integer, String> finishReasons = new TreeMap<>();
    private final Map<Integer, Completion.LegacyLogprobs> logprobs = new TreeMap<>();

    public CompletionAggregator add(Completion chunk) {
        if (id == null) {
            id = chunk.id();
            created = chunk.created();
            model = chunk.model();
        }
        if (chunk.usage() != null) {
            usage = chunk.usage();
        }
        if (chunk.choices() != null) {
            for (Completion.Choice c : chunk.choices()) {
                StringBuilder sb = texts.computeIfAbsent(c.index(), i -> new StringBuilder());
                if (c.text() != null) {
                    sb.append(c.text());
                }
                if (c.finishReason() != null) {
                    finishReasons.put(c.index(), c.finishReason());
                }
                if (c.logprobs() != null) {
                    logprobs.merge(c.index(), c.logprobs(), CompletionAggregator::concat);
                }
            }
        }
        return this;
    }

    public Completion result() {
        List<Completion.Choice> out = new ArrayList<>();
        texts.forEach((i, sb) -> out.add(new Completion.Choice(i, sb.toString(), logprobs.get(i), finishReasons.get(i))));
        if (out.isEmpty()) {
            out.add(new Completion.Choice(0, "", null, null));
        }
        return new Completion(id, Completion.OBJECT, created, model, null, out, usage, null);
    }

    private static Completion.LegacyLogprobs concat(Completion.LegacyLogprobs a, Completion.LegacyLogprobs b) {
        return new Completion.LegacyLogprobs(join(a.tokens(), b.tokens()), join(a.tokenLogprobs(), b.tokenLogprobs()),
                join(a.topLogprobs(), b.topLogprobs()), join(a.textOffset(), b.textOffset()));
    }

    private static <T> List<T> join(List<T> a, List<T> b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        List<T> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
