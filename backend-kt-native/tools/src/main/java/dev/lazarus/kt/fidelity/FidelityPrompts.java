package dev.lazarus.kt.fidelity;

import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.tokenizer.Tokenizer;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a measurement's prompts come from: a built-in set, or a file of one prompt per line. A text prompt is sent
 * as a user message through the model's chat template (how a chat model is used; ChatML when the GGUF has none)
 * unless raw, then tokenized by the engine's tokenizer with BOS and special tokens parsed, as the kt-native backend
 * does; both implementations receive the same token ids, so tokenization itself is not measured.
 */
public final class FidelityPrompts {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * The decision gate's three benchmark prompts plus code, numbers and accented German, which exercise other
     * parts of a vocabulary.
     */
    public static final Map<String, String> BUILT_IN = builtIn();

    private FidelityPrompts() {
    }

    private static Map<String, String> builtIn() {
        Map<String, String> prompts = new LinkedHashMap<>();
        prompts.put("entanglement", "Explain quantum entanglement in simple terms.");
        prompts.put("primes", "Write a Python function to find prime numbers.");
        prompts.put("distributed", "What are the key principles of distributed systems?");
        prompts.put("code", "Complete this function:\ndef fib(n):\n    if n < 2:\n        return n\n    return");
        prompts.put("numbers", "Add 3.14159, 2718 and 1,000,000; then write 0x7fff in decimal.");
        prompts.put("multilingual", "Übersetze ins Französische, Japanische und Russische: Guten Morgen, wie geht's?");
        return Collections.unmodifiableMap(prompts);
    }

    /** The built-in prompts, tokenized ({@code template} null: raw text). */
    public static List<FidelityPrompt> builtIn(Tokenizer tokenizer, ChatTemplate template) {
        List<FidelityPrompt> out = new ArrayList<>();
        BUILT_IN.forEach((name, text) -> out.add(new FidelityPrompt(name, encode(text, tokenizer, template))));
        return out;
    }

    /** The prompts of a file, one per line; see {@link #parse}. */
    public static List<FidelityPrompt> read(Path file, Tokenizer tokenizer, ChatTemplate template) {
        try {
            return parse(Files.readAllLines(file), tokenizer, template);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read prompts from " + file, e);
        }
    }

    /**
     * One prompt per non-blank line, named {@code line-N}: a JSON array of integers is token ids, sent as they are
     * (no template); a JSON string ({@code "a\nb"}) is a text with escapes; any other line is a text as written.
     * Lines starting with {@code #} are comments.
     */
    public static List<FidelityPrompt> parse(List<String> lines, Tokenizer tokenizer, ChatTemplate template) {
        List<FidelityPrompt> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String name = "line-" + (i + 1);
            if (line.startsWith("[")) {
                out.add(new FidelityPrompt(name, ids(json(line, name))));
            } else if (line.startsWith("\"")) {
                JsonNode text = json(line, name);
                if (!text.isString()) {
                    throw new IllegalArgumentException(name + ": not a JSON string: " + line);
                }
                out.add(new FidelityPrompt(name, encode(text.asString(), tokenizer, template)));
            } else {
                out.add(new FidelityPrompt(name, encode(line, tokenizer, template)));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("no prompts: every line is blank or a comment");
        }
        return out;
    }

    /** A text as a chat user turn (or raw when {@code template} is null), in token ids. */
    public static int[] encode(String text, Tokenizer tokenizer, ChatTemplate template) {
        String rendered = template == null ? text
                : template.render(List.of(ChatMessage.user(text)), List.of(), true);
        return tokenizer.encode(rendered, true, true);
    }

    private static JsonNode json(String line, String name) {
        try {
            return JSON.readTree(line);
        } catch (JacksonException e) {
            throw new IllegalArgumentException(name + ": not valid JSON: " + line);
        }
    }

    private static int[] ids(JsonNode array) {
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode id = array.get(i);
            if (!id.canConvertToInt() || !id.isIntegralNumber() || id.asInt() < 0) {
                throw new IllegalArgumentException("token ids must be non-negative integers: " + array);
            }
            ids[i] = id.asInt();
        }
        return ids;
    }
}
