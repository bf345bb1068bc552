package dev.lazarus.kt.correctness;

import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.kt.chat.ChatTemplate;

import java.util.List;

/** The prompts continued by both implementations: varied scripts, lengths (1 to 100+ tokens) and token kinds. */
final class ParityPrompts {

    private ParityPrompts() {
    }

    record Prompt(String name, String text) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** Plain prompts plus one rendered with the model's own chat template (special tokens parsed). */
    static List<Prompt> all(ChatTemplate template) {
        String chat = template.render(List.of(
                ChatMessage.system("You are a terse assistant."),
                ChatMessage.user("What is the capital of France?"),
                ChatMessage.assistant("Paris."),
                ChatMessage.user("And of Italy?")), List.of(), true);
        return List.of(
                new Prompt("english", "The quick brown fox jumps over the lazy dog. Meanwhile, the gateway"),
                new Prompt("code", "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\nprint("),
                new Prompt("digits", "3.14159265358979 2718281828 1,000,000 42 0x7fff 2024-06-01"),
                new Prompt("unicode", "Grüße aus Köln — naïve café, Ελληνικά, русский текст, 日本語のテキスト"),
                new Prompt("emoji-cjk", "你好，世界！🎉🚀 こんにちは 🙂 한국어 ✓"),
                new Prompt("whitespace", "a\n\n\n    b\t\tc      d \r\n   \n\t end"),
                new Prompt("single-token", "The"),
                new Prompt("json", "{\"model\": \"lazarus\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], "),
                new Prompt("chat", chat),
                // long enough (100+ tokens) that batched products take their many-row paths, per expert too
                new Prompt("long", "Lazarus sits between OpenAI clients and the servers that run their models. It sends"
                        + " each request to the fastest backend that is healthy, keeps llama.cpp warm as the fallback, and"
                        + " continues a stream on the next backend when one dies mid-answer. Its engine reads GGUF files in"
                        + " place, keeps hot experts in RAM or on the GPU, and must compute what llama.cpp computes, token"
                        + " for token, on every CPU its users own: AMD Zen 4, Intel Sapphire Rapids, and the rest."));
    }
}
