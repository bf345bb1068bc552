package dev.lazarus.kt.tokenizer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Small GGUF-style metadata maps built in code, as the gguf reader would return them. */
final class TestVocabs {

    private TestVocabs() {}

    static final class Builder {
        private final String model;
        private final List<Object> tokens = new ArrayList<>();
        private final List<Object> types = new ArrayList<>();
        private final List<Object> scores = new ArrayList<>();
        private final List<Object> merges = new ArrayList<>();
        private final Map<String, Object> extra = new LinkedHashMap<>();

        Builder(String model) {
            this.model = model;
        }

        Builder token(String text, TokenType type, float score) {
            tokens.add(text);
            types.add(type.ordinal());
            scores.add(score);
            return this;
        }

        Builder token(String text) {
            return token(text, TokenType.NORMAL, 0f);
        }

        /** Adds the merge and its result as a normal token. */
        Builder merge(String left, String right) {
            merges.add(left + " " + right);
            if (!tokens.contains(left + right)) {
                token(left + right);
            }
            return this;
        }

        Builder put(String key, Object value) {
            extra.put(key, value);
            return this;
        }

        int id(String text) {
            return tokens.indexOf(text);
        }

        Map<String, Object> metadata() {
            Map<String, Object> md = new LinkedHashMap<>();
            md.put("general.architecture", "llama");
            md.put("tokenizer.ggml.model", model);
            md.put("tokenizer.ggml.tokens", List.copyOf(tokens));
            md.put("tokenizer.ggml.token_type", List.copyOf(types));
            if (model.equals("llama")) {
                md.put("tokenizer.ggml.scores", List.copyOf(scores));
            } else {
                md.put("tokenizer.ggml.merges", List.copyOf(merges));
            }
            md.putAll(extra);
            return md;
        }

        Tokenizer build() {
            return Tokenizers.fromMetadata(metadata());
        }
    }

    /** Byte-level BPE: the 256 byte characters (id = byte value) and nothing else yet. */
    static Builder byteLevel(String pre) {
        Builder b = new Builder("gpt2");
        for (int i = 0; i < 256; i++) {
            b.token(String.valueOf(ByteUnicode.encode((byte) i)));
        }
        if (pre != null) {
            b.put("tokenizer.ggml.pre", pre);
        }
        return b;
    }

    /** ChatML-flavoured byte-level vocabulary with a few merges and special tokens. */
    static Builder chatMl(String pre) {
        return byteLevel(pre)
                .merge("h", "e").merge("l", "l").merge("he", "ll").merge("hell", "o")
                .merge("Ġ", "w").merge("o", "r").merge("Ġw", "or").merge("Ġwor", "l").merge("Ġworl", "d")
                .token("<|endoftext|>", TokenType.CONTROL, 0)
                .token("<|im_start|>", TokenType.CONTROL, 0)
                .token("<|im_end|>", TokenType.CONTROL, 0)
                .token("<tool_call>", TokenType.USER_DEFINED, 0)
                .put("tokenizer.ggml.eos_token_id", 256 + 9)
                .put("tokenizer.ggml.bos_token_id", 256 + 9);
    }

    /** SentencePiece vocabulary: unk, bos, eos, 256 byte tokens, then scored pieces. */
    static Builder sentencePiece() {
        return sentencePiece(true);
    }

    /** As {@link #sentencePiece()}, without the byte tokens when {@code byteFallback} is false. */
    static Builder sentencePiece(boolean byteFallback) {
        Builder b = new Builder("llama")
                .token("<unk>", TokenType.UNKNOWN, 0)
                .token("<s>", TokenType.CONTROL, 0)
                .token("</s>", TokenType.CONTROL, 0);
        for (int i = 0; byteFallback && i < 256; i++) {
            b.token(String.format("<0x%02X>", i), TokenType.BYTE, 0);
        }
        String[] pieces = {"▁", "h", "e", "l", "o", "w", "r", "d", "he", "ll", "hell", "hello", "▁hello", "▁w", "or",
                "▁wor", "▁world", "▁h", "lo"};
        float score = -1;
        for (String p : pieces) {
            b.token(p, TokenType.NORMAL, score);
            score -= 1;
        }
        // make the long pieces win: SentencePiece merges by the merged token's score
        return b;
    }
}
