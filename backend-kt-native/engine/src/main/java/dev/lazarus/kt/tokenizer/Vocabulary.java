package dev.lazarus.kt.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The token list of a GGUF file with its types, scores, special ids and flags, read the way
 * llama.cpp's {@code llama_vocab::load} reads them — including its defaults (SentencePiece BOS 1 /
 * EOS 2 / UNK 0, byte-level BPE BOS = EOS = 11), its range checks (an out-of-range special id is
 * ignored), and its detection of end-of-generation tokens by their text.
 */
final class Vocabulary {

    static final int NONE = -1;

    private static final String P = "tokenizer.ggml.";

    /** Token texts that end generation whatever the metadata says (llama.cpp's list). */
    private static final Set<String> EOG_TEXTS = Set.of("<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
            "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
            "<｜end▁of▁sentence｜>");
    private static final Set<String> EOT_TEXTS = Set.of("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
            "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>");
    /** Fill-in-the-middle pad / repo / file separator tokens also end generation in llama.cpp. */
    private static final Set<String> FIM_EOG_TEXTS = Set.of("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
            "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>");

    final String model;
    final String[] texts;
    final TokenType[] types;
    final float[] scores;
    final Map<String, Integer> ids;
    final int bos;
    final int eos;
    final int eot;
    final int unk;
    final boolean addBos;
    final boolean addEos;
    final boolean addSpacePrefix;
    final BitSet eog;
    /** Control, user-defined and unknown tokens, longest text first: the order they are cut out of raw text. */
    final int[] specialsByLength;

    private Vocabulary(TokenizerKeys md, PreTokenizer pre) {
        model = md.string(P + "model", null);
        if (model == null) {
            throw new TokenizerException("metadata key " + P + "model is missing");
        }
        boolean spm = model.equals("llama");
        List<?> tokenList = md.array(P + "tokens", true);
        int n = tokenList.size();
        texts = new String[n];
        types = new TokenType[n];
        scores = new float[n];
        ids = HashMap.newHashMap(n);
        List<?> typeList = md.array(P + "token_type", false);
        List<?> scoreList = md.array(P + "scores", false);
        for (int i = 0; i < n; i++) {
            String text = tokenList.get(i) instanceof String s && !s.isEmpty() ? s : "[EMPTY_" + i + "]";
            texts[i] = text;
            if (ids.putIfAbsent(text, i) != null) {
                throw new TokenizerException("duplicate token in vocabulary: '" + text + "' has ids " + ids.get(text) + " and " + i);
            }
            types[i] = typeList == null ? TokenType.NORMAL : TokenType.fromId(((Number) typeList.get(i)).longValue());
            scores[i] = scoreList == null ? 0f : ((Number) scoreList.get(i)).floatValue();
        }
        bos = special(md, "bos_token_id", spm ? 1 : 11);
        eos = special(md, "eos_token_id", spm ? 2 : 11);
        unk = special(md, "unknown_token_id", spm ? 0 : NONE);
        int eotId = special(md, "eot_token_id", NONE);
        int eomId = special(md, "eom_token_id", NONE);
        Boolean addBosFlag = md.bool(P + "add_bos_token");
        Boolean addEosFlag = md.bool(P + "add_eos_token");
        Boolean spaceFlag = md.bool(P + "add_space_prefix");
        addBos = addBosFlag != null ? addBosFlag : spm || (pre != null && pre.addBosByDefault());
        addEos = addEosFlag != null && addEosFlag;
        addSpacePrefix = spaceFlag != null ? spaceFlag : spm;
        if (addBos && bos == NONE) {
            throw new TokenizerException(P + "add_bos_token is true, but " + P + "bos_token_id is not set");
        }

        eog = new BitSet(n);
        int detectedEot = eotId;
        for (int i = 0; i < n; i++) {
            String text = texts[i];
            if (detectedEot == NONE && EOT_TEXTS.contains(text)) {
                detectedEot = i;
                markControl(i);
            }
            if (EOG_TEXTS.contains(text) || FIM_EOG_TEXTS.contains(text)) {
                eog.set(i);
                markControl(i);
            }
        }
        eot = detectedEot;
        for (int id : new int[] {eos, eot, eomId}) {
            if (id != NONE) {
                eog.set(id);
            }
        }
        specialsByLength = specials();
    }

    static Vocabulary fromMetadata(Map<String, Object> metadata, PreTokenizer pre) {
        return new Vocabulary(new TokenizerKeys(metadata), pre);
    }

    int size() {
        return texts.length;
    }

    int id(String text) {
        Integer id = ids.get(text);
        return id == null ? NONE : id;
    }

    private void markControl(int id) {
        if (types[id] != TokenType.CONTROL && types[id] != TokenType.UNKNOWN && types[id] != TokenType.USER_DEFINED) {
            types[id] = TokenType.CONTROL;
        }
    }

    /** A special id from metadata, or the default; ids outside the vocabulary are ignored like llama.cpp does. */
    private int special(TokenizerKeys md, String key, int def) {
        int fallback = def >= texts.length ? NONE : def;
        long value = md.integer(P + key, -1);
        return value >= 0 && value < texts.length ? (int) value : fallback;
    }

    private int[] specials() {
        List<Integer> list = new ArrayList<>();
        for (int i = 0; i < texts.length; i++) {
            TokenType t = types[i];
            if (t == TokenType.CONTROL || t == TokenType.USER_DEFINED || t == TokenType.UNKNOWN) {
                list.add(i);
            }
        }
        // llama.cpp compares lengths in UTF-8 bytes
        list.sort(Comparator.comparingInt((Integer id) -> -texts[id].getBytes(StandardCharsets.UTF_8).length)
                .thenComparingInt(id -> id));
        return list.stream().mapToInt(Integer::intValue).toArray();
    }
}
