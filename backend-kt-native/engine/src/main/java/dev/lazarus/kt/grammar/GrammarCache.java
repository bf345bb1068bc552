package dev.lazarus.kt.grammar;

import dev.lazarus.kt.tokenizer.Tokenizer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One model's compiled grammars, by GBNF text: an agent sends the same schema with every request, and its
 * remembered states and masks serve the next request too. The vocabulary index, shared by all of them, is built
 * once per model: by {@link #prepare()} ahead of the first constrained request, or else by that request.
 * Thread-safe.
 */
public final class GrammarCache {

    private static final int CAPACITY = 32;

    private final Tokenizer tokenizer;
    private volatile VocabIndex vocab;
    private final Object vocabLock = new Object();
    private final Map<String, CompiledGrammar> grammars = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CompiledGrammar> eldest) {
            return size() > CAPACITY;
        }
    };

    public GrammarCache(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    /**
     * The compiled grammar of {@code gbnf}.
     *
     * @throws GrammarException when llama-server would refuse it, with the reason
     */
    public synchronized CompiledGrammar compile(String gbnf) {
        CompiledGrammar g = grammars.get(gbnf);
        if (g == null) {
            Grammar parsed = Grammar.parse(gbnf, text -> tokenizer.encode(text, false, true));
            g = new CompiledGrammar(gbnf, parsed, vocab());
            grammars.put(gbnf, g);
        }
        return g;
    }

    /** Builds the vocabulary index now (a fraction of a second per 100,000 tokens), unless it is built already. */
    public void prepare() {
        vocab();
    }

    private VocabIndex vocab() {
        VocabIndex v = vocab;
        if (v == null) {
            synchronized (vocabLock) {
                v = vocab;
                if (v == null) {
                    v = VocabIndex.of(tokenizer);
                    vocab = v;
                }
            }
        }
        return v;
    }
}
