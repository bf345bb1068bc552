package dev.lazarus.kt.correctness;

import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.synthetic.SyntheticModels;
import dev.lazarus.kt.testsupport.LlamaCpp;
import dev.lazarus.kt.testsupport.LlamaServerProcess;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import dev.lazarus.kt.gguf.GgufFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.lazarus.kt.correctness.LlamaReference.JSON;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's tokenizer and chat template give exactly what llama-server gives for the same GGUF: token ids
 * and pieces of {@code /tokenize} (with and without special-token parsing, with and without BOS), the text of
 * {@code /detokenize}, and the prompt of {@code /apply-template} (llama-server started with {@code --jinja})
 * for conversations with system, user and assistant turns, tools, tool calls and tool results.
 */
@Tag("llama-server")
class TokenizerParityTest {

    /** Unicode, CJK, emoji, digits, whitespace runs, code and special tokens, alone and mixed. */
    static final List<String> CORPUS = List.of(
            "Hello world",
            " leading space and trailing space ",
            "The quick brown fox jumps over the lazy dog.",
            "3.14159 2718281828 1,000,000 123456789012345 0x1F -42 1e-5",
            "Grüße aus Köln — naïve café, Ελληνικά, русский текст",
            "你好，世界！日本語のテキスト、한국어 텍스트",
            "🎉🚀🙂 👩‍💻 🇫🇷 ✓ ☃ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
            "a\n\n\nb\t\tc      d \r\n   \n\t end",
            "    indented\n        more\n\n\n\n",
            "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
            "for (int i = 0; i < n; i++) { sum += a[i] * b[i]; } // dot",
            "{\"key\": [1, 2, 3], \"nested\": {\"x\": null, \"ok\": true}}",
            "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
            "text<|endoftext|>more text<|im_end|>",
            "<|im_start|><|im_start|>nested <|im_end|> specials",
            "don't won't it's I'm we'll they've you'd",
            "MiXeD CaSe aNd UPPER lower",
            "",
            " ",
            "\n");

    @TempDir
    static Path dir;

    static LlamaServerProcess server;
    static GgufFile file;
    static Tokenizer tokenizer;

    @BeforeAll
    static void start() {
        LlamaCpp.require();
        Path model = SyntheticModels.write(SyntheticModels.tinyQwen3Moe(), dir.resolve("tokenizer.gguf"));
        file = GgufFile.open(model);
        tokenizer = Tokenizers.fromMetadata(file.metadata());
        server = LlamaReference.start(model, "--jinja").server();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (file != null) {
            file.close();
        }
    }

    @Test
    void tokenizeMatchesLlamaServer() {
        List<String> failures = new ArrayList<>();
        for (String text : CORPUS) {
            for (boolean addSpecial : new boolean[] {false, true}) {
                for (boolean parseSpecial : new boolean[] {false, true}) {
                    ObjectNode request = JSON.createObjectNode().put("content", text).put("add_special", addSpecial)
                            .put("parse_special", parseSpecial).put("with_pieces", true);
                    JsonNode tokens = JSON.readTree(server.post("/tokenize", JSON.writeValueAsString(request))).path("tokens");
                    int[] theirs = tokens.valueStream().mapToInt(t -> t.path("id").asInt()).toArray();
                    int[] ours = tokenizer.encode(text, addSpecial, parseSpecial);
                    if (!Arrays.equals(ours, theirs)) {
                        failures.add("%s (add_special %s, parse_special %s): engine %s, llama-server %s"
                                .formatted(JSON.writeValueAsString(text), addSpecial, parseSpecial,
                                        Arrays.toString(ours), Arrays.toString(theirs)));
                        continue;
                    }
                    for (int i = 0; i < theirs.length; i++) {
                        byte[] piece = pieceBytes(tokens.get(i).path("piece"));
                        if (!Arrays.equals(tokenizer.tokenBytes(theirs[i]), piece)) {
                            failures.add("token %d of %s: engine bytes %s, llama-server piece %s".formatted(theirs[i],
                                    JSON.writeValueAsString(text), Arrays.toString(tokenizer.tokenBytes(theirs[i])),
                                    tokens.get(i).path("piece")));
                        }
                    }
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void detokenizeMatchesLlamaServer() {
        List<String> failures = new ArrayList<>();
        for (String text : CORPUS) {
            int[] ids = tokenizer.encode(text, false, true);
            String theirs = JSON.readTree(server.post("/detokenize", "{\"tokens\":" + Arrays.toString(ids) + "}"))
                    .path("content").asString();
            // llama-server's /detokenize renders control tokens as their text.
            String ours = tokenizer.decode(ids, true);
            if (!ours.equals(theirs)) {
                failures.add("%s: engine %s, llama-server %s".formatted(Arrays.toString(ids),
                        JSON.writeValueAsString(ours), JSON.writeValueAsString(theirs)));
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void chatTemplateMatchesApplyTemplate() {
        ChatTemplate template = ChatTemplate.fromMetadata(file.metadata(), tokenizer);
        String tools = """
                [{"type":"function","function":{"name":"get_weather","description":"Weather of a city",
                  "parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},
                  "required":["city"]}}},
                 {"type":"function","function":{"name":"now","description":"Current time","parameters":{"type":"object","properties":{}}}}]""";
        List<String> conversations = List.of(
                """
                [{"role":"user","content":"Hi"}]""",
                """
                [{"role":"system","content":"You are terse."},{"role":"user","content":"Hi"},
                 {"role":"assistant","content":"Hello."},{"role":"user","content":"Grüße 你好 🎉\\n\\n  spaces"}]""",
                """
                [{"role":"user","content":"Weather in Paris and Rome?"},
                 {"role":"assistant","content":"","tool_calls":[
                   {"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}},
                   {"id":"c2","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Rome\\",\\"unit\\":\\"c\\"}"}}]},
                 {"role":"tool","tool_call_id":"c1","content":"sunny"},
                 {"role":"tool","tool_call_id":"c2","content":"rain"},
                 {"role":"user","content":"Thanks"}]""",
                """
                [{"role":"system","content":"Use tools."},{"role":"user","content":"What time is it?"},
                 {"role":"assistant","content":"Let me check.","tool_calls":[
                   {"id":"t1","type":"function","function":{"name":"now","arguments":"{}"}}]},
                 {"role":"tool","tool_call_id":"t1","content":"12:00"},
                 {"role":"assistant","content":"It is noon."}]""");
        List<String> failures = new ArrayList<>();
        for (String messagesJson : conversations) {
            for (boolean withTools : new boolean[] {false, true}) {
                String body = "{\"messages\":" + messagesJson + (withTools ? ",\"tools\":" + tools : "") + "}";
                String theirs = JSON.readTree(server.post("/apply-template", body)).path("prompt").asString();
                List<ChatMessage> messages = JSON.readValue(messagesJson, new TypeReference<List<ChatMessage>>() { });
                List<Tool> toolList = withTools ? JSON.readValue(tools, new TypeReference<List<Tool>>() { }) : List.of();
                String ours = render(template, messages, toolList);
                if (!ours.equals(theirs)) {
                    failures.add("%s (tools %s):%n engine       %s%n llama-server %s".formatted(messagesJson, withTools,
                            JSON.writeValueAsString(ours), JSON.writeValueAsString(theirs)));
                }
            }
        }
        assertThat(failures).isEmpty();
    }

    /**
     * As llama-server renders a conversation: a trailing assistant message is a prefill to continue, so the
     * turns before it are rendered with the generation prompt and its text appended (no end of turn), the same
     * rule KtNativeBackend applies; otherwise the generation prompt follows the last turn.
     */
    private static String render(ChatTemplate template, List<ChatMessage> messages, List<Tool> tools) {
        ChatMessage last = messages.getLast();
        if ("assistant".equals(last.role()) && messages.size() > 1) {
            return template.render(messages.subList(0, messages.size() - 1), tools, true) + last.text();
        }
        return template.render(messages, tools, true);
    }

    /** A piece is a string, or an array of byte values when it is not valid UTF-8 on its own. */
    private static byte[] pieceBytes(JsonNode piece) {
        if (piece.isString()) {
            return piece.asString().getBytes(StandardCharsets.UTF_8);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        piece.forEach(b -> out.write(b.asInt()));
        return out.toByteArray();
    }
}
