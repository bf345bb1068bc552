package dev.lazarus.kt.tokenizer;

import java.util.Map;

/** Builds the tokenizer a GGUF file describes. */
public final class Tokenizers {

    private Tokenizers() {}

    /**
     * @param ggufMetadata the metadata map as the gguf reader returns it ({@code tokenizer.ggml.*} keys)
     * @throws TokenizerException when the vocabulary is missing, malformed or of an unsupported kind
     */
    public static Tokenizer fromMetadata(Map<String, Object> ggufMetadata) {
        TokenizerKeys keys = new TokenizerKeys(ggufMetadata);
        String model = keys.string("tokenizer.ggml.model", null);
        if (model == null) {
            throw new TokenizerException("metadata key tokenizer.ggml.model is missing");
        }
        return switch (model) {
            case "gpt2" -> {
                PreTokenizer pre = PreTokenizer.named(keys.string("tokenizer.ggml.pre", null));
                Vocabulary vocab = Vocabulary.fromMetadata(ggufMetadata, pre);
                yield new BpeTokenizer(vocab, pre, keys.array("tokenizer.ggml.merges", true));
            }
            case "llama" -> new SpmTokenizer(Vocabulary.fromMetadata(ggufMetadata, null));
            default -> throw new TokenizerException("unsupported tokenizer model '" + model
                    + "' (supported: gpt2 byte-level BPE, llama SentencePiece)");
        };
    }
}
