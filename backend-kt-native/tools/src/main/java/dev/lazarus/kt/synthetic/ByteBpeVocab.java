package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgufValueType;
import dev.lazarus.kt.gguf.GgufWriter;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A byte-level BPE vocabulary in the GPT-2 style that llama.cpp loads as {@code tokenizer.ggml.model = gpt2}:
 * the 256 byte tokens (id = byte value, spelt with {@link GptBytes}), the pieces of merges learnt from a
 * built-in English + code corpus, and the ChatML control tokens {@code <|endoftext|>} (BOS, padding),
 * {@code <|im_start|>} and {@code <|im_end|>} (EOS and EOT), plus a ChatML chat template with tool calls.
 *
 * <p>Deterministic: the same corpus and merge count give the same vocabulary, token for token.
 */
public final class ByteBpeVocab implements Vocab {

    public static final String END_OF_TEXT = "<|endoftext|>";
    public static final String IM_START = "<|im_start|>";
    public static final String IM_END = "<|im_end|>";

    /** llama.cpp's token types ({@code llama_token_type}). */
    public static final int TYPE_NORMAL = 1;
    public static final int TYPE_CONTROL = 3;

    /** The pre-tokenizer llama.cpp applies before BPE; the trainer splits the corpus the same way. */
    public static final String PRE_TOKENIZER = "qwen2";

    private static final int DEFAULT_MERGES = 512;
    private static final String RESOURCES = "/dev/lazarus/kt/synthetic/";

    private static volatile ByteBpeVocab standard;

    private final List<String> tokens;
    private final List<Integer> types;
    private final List<String> merges;
    private final Map<String, Integer> ids;

    private ByteBpeVocab(List<String> tokens, List<Integer> types, List<String> merges) {
        this.tokens = List.copyOf(tokens);
        this.types = List.copyOf(types);
        this.merges = List.copyOf(merges);
        Map<String, Integer> byPiece = new HashMap<>();
        for (int i = 0; i < tokens.size(); i++) {
            byPiece.putIfAbsent(tokens.get(i), i);
        }
        this.ids = Collections.unmodifiableMap(byPiece);
    }

    /** The vocabulary every generated model uses: {@value #DEFAULT_MERGES} merges from the built-in corpus. */
    public static ByteBpeVocab standard() {
        ByteBpeVocab v = standard;
        if (v == null) {
            synchronized (ByteBpeVocab.class) {
                if (standard == null) {
                    standard = train(builtInCorpus(), DEFAULT_MERGES);
                }
                v = standard;
            }
        }
        return v;
    }

    /** Learns up to {@code maxMerges} merges from {@code corpus} (fewer when no pair occurs twice any more). */
    public static ByteBpeVocab train(String corpus, int maxMerges) {
        return fromMerges(BpeTrainer.train(corpus, maxMerges).stream().map(BpeTrainer.Merge::toString).toList());
    }

    /**
     * The vocabulary of these merges ({@code "left right"} in vocabulary spelling, rank order, as {@link #merges()}
     * lists them): the byte tokens, one token per distinct merged piece, then the ChatML control tokens.
     */
    public static ByteBpeVocab fromMerges(List<String> mergeList) {
        List<String> tokens = new ArrayList<>();
        List<Integer> types = new ArrayList<>();
        for (int b = 0; b < 256; b++) {
            tokens.add(String.valueOf(GptBytes.charOf(b)));
            types.add(TYPE_NORMAL);
        }
        List<String> merges = new ArrayList<>();
        Set<String> known = new HashSet<>(tokens);
        for (String merge : mergeList) {
            int space = merge.indexOf(' ');
            if (space <= 0 || space != merge.lastIndexOf(' ') || space == merge.length() - 1) {
                throw new IllegalArgumentException("not a merge: '" + merge + "'");
            }
            merges.add(merge);
            String joined = merge.substring(0, space) + merge.substring(space + 1);
            // Two different merges can spell the same piece ("ab"+"c", "a"+"bc"): one token serves both.
            if (known.add(joined)) {
                tokens.add(joined);
                types.add(TYPE_NORMAL);
            }
        }
        for (String special : List.of(END_OF_TEXT, IM_START, IM_END)) {
            tokens.add(special);
            types.add(TYPE_CONTROL);
        }
        return new ByteBpeVocab(tokens, types, merges);
    }

    public static String builtInCorpus() {
        return resource("bpe-corpus.txt");
    }

    /** ChatML with Hermes-style {@code <tool_call>} blocks, the layout of Qwen2.5's template. */
    public static String chatTemplate() {
        // Without the file's final newline: llama.cpp drops it too, and /props must echo the template unchanged.
        return resource("chatml-tools.jinja").stripTrailing();
    }

    /** Pieces in vocabulary spelling (bytes through {@link GptBytes}), indexed by token id. */
    public List<String> tokens() {
        return tokens;
    }

    public List<Integer> tokenTypes() {
        return types;
    }

    /** Merges as GGUF stores them, {@code "left right"}, in rank order. */
    public List<String> merges() {
        return merges;
    }

    @Override
    public int size() {
        return tokens.size();
    }

    public OptionalInt id(String piece) {
        Integer id = ids.get(piece);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    public int bos() {
        return special(END_OF_TEXT);
    }

    public int eos() {
        return special(IM_END);
    }

    public int eot() {
        return special(IM_END);
    }

    public int padding() {
        return special(END_OF_TEXT);
    }

    /** Puts the {@code tokenizer.*} metadata llama.cpp reads for a gpt2-style vocabulary. */
    @Override
    public void writeTo(GgufWriter w) {
        w.putString("tokenizer.ggml.model", "gpt2");
        w.putString("tokenizer.ggml.pre", PRE_TOKENIZER);
        w.putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens);
        w.putArray("tokenizer.ggml.token_type", GgufValueType.INT32, types);
        w.putArray("tokenizer.ggml.merges", GgufValueType.STRING, merges);
        w.putU32("tokenizer.ggml.bos_token_id", bos());
        w.putU32("tokenizer.ggml.eos_token_id", eos());
        w.putU32("tokenizer.ggml.eot_token_id", eot());
        w.putU32("tokenizer.ggml.padding_token_id", padding());
        w.putBool("tokenizer.ggml.add_bos_token", false);
        w.putBool("tokenizer.ggml.add_eos_token", false);
        w.putString("tokenizer.chat_template", chatTemplate());
    }

    private int special(String piece) {
        return id(piece).orElseThrow(() -> new IllegalStateException("vocabulary lacks " + piece));
    }

    private static String resource(String name) {
        try (InputStream in = ByteBpeVocab.class.getResourceAsStream(RESOURCES + name)) {
            Objects.requireNonNull(in, () -> "missing resource " + RESOURCES + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
