package dev.lazarus.llamacpp.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatEvent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** The scan finds in a chunk's bytes what the typed reader reads of it, and passes on the same bytes. */
class ChatEventScannerTest {

    private static final JsonMapper JSON = JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).build();
    private static final byte[] ID = "\"gw-1\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CREATED = "42".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MODEL = "\"public\"".getBytes(StandardCharsets.US_ASCII);

    private final ChatChunkReader reader = new ChatChunkReader(JSON);

    @Test
    void agreesWithTheTypedReaderOnEveryShapeItScansAndScansTheUsualOnes() {
        int scanned = 0;
        for (int i = 0; i < ChatChunkReaderTest.CHUNKS.size(); i++) {
            String chunk = ChatChunkReaderTest.CHUNKS.get(i);
            byte[] framed = ("data: " + chunk + "\ndata: {\"id\":\"next\"}").getBytes(StandardCharsets.UTF_8);
            int length = chunk.getBytes(StandardCharsets.UTF_8).length;
            ChatEvent event = new ChatEventScanner(JSON, null).scan(framed, 6, length);
            if (i < 7) {
                assertThat(event).as("the usual shape %s", chunk).isNotNull();
            }
            if (event == null) {
                continue;
            }
            scanned++;
            ChatCompletionChunk typed = reader.read(framed, 6, length);
            ChatCompletionChunk.Choice choice = typed.choices() == null || typed.choices().isEmpty() ? null
                    : typed.choices().getFirst();
            ChatCompletionChunk.Delta delta = choice == null ? null : choice.delta();
            assertThat(event.text()).as(chunk).isEqualTo(delta == null ? null : delta.content());
            assertThat(event.structured()).as(chunk).isEqualTo(delta != null
                    && ((delta.toolCalls() != null && !delta.toolCalls().isEmpty())
                    || (delta.reasoningContent() != null && !delta.reasoningContent().isEmpty())));
            assertThat(event.role()).as(chunk).isEqualTo(delta != null && delta.role() != null);
            assertThat(event.finishReason()).as(chunk).isEqualTo(choice != null && choice.finishReason() != null);
            assertThat(event.hasChoices()).as(chunk).isEqualTo(choice != null);
            assertThat(event.usage()).as(chunk).isEqualTo(typed.usage());
            assertThat(event.raw().withIdentity(ID, CREATED, MODEL)).as(chunk)
                    .isEqualTo(typed.raw().withIdentity(ID, CREATED, MODEL));
        }
        assertThat(scanned).isGreaterThanOrEqualTo(7);
    }

    @Test
    void leavesOtherShapesToTheTypedReader() {
        for (String chunk : List.of(
                "{\"error\":{\"code\":500,\"message\":\"boom\"}}",
                // usage beside choices: the gateway splits it
                "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}},{\"index\":1,\"delta\":{\"content\":\"b\"}}]}",
                "{\"i\\u0064\":\"c\"}",
                "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]",
                "{\"id\":\"c\"} x",
                "{\"id\":\"c\",\"created\":tru}",
                "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":7}}]}",
                "[1]",
                "")) {
            byte[] framed = ("data: " + chunk + "}]}\"\n").getBytes(StandardCharsets.UTF_8);
            int length = chunk.getBytes(StandardCharsets.UTF_8).length;
            assertThat(new ChatEventScanner(JSON, null).scan(framed, 6, length)).as(chunk).isNull();
        }
    }

    @Test
    void keepsTheFirstTimingsWithThePromptsSizeAndCutsTheLaterOnesAsTheReaderDoes() {
        String first = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"He\"}}],\"id\":\"c\",\"model\":\"q\","
                + "\"timings\":{\"cache_n\":3,\"prompt_n\":5,\"predicted_n\":1}}";
        String second = "{\"timings\":{\"cache_n\":3,\"prompt_n\":5,\"predicted_n\":2},\"choices\":[{\"index\":0,"
                + "\"delta\":{\"content\":\"llo\"}}],\"id\":\"c\",\"model\":\"q\"}";
        ChatEventScanner scanner = new ChatEventScanner(JSON, new ChatChunkReader.TimingsTrim());
        ChatChunkReader.TimingsTrim trim = new ChatChunkReader.TimingsTrim();
        for (String chunk : List.of(first, second)) {
            byte[] bytes = chunk.getBytes(StandardCharsets.UTF_8);
            ChatEvent event = scanner.scan(bytes, 0, bytes.length);
            ChatCompletionChunk typed = reader.read(bytes, 0, bytes.length, trim);
            assertThat(event.raw().withIdentity(ID, CREATED, MODEL)).isEqualTo(typed.raw().withIdentity(ID, CREATED, MODEL));
            assertThat(event.promptTokens()).isEqualTo(chunk == first ? 8 : -1);
        }
        assertThat(new String(scanner.scan(second.getBytes(StandardCharsets.UTF_8), 0, second.length())
                .raw().withIdentity(ID, CREATED, MODEL), StandardCharsets.UTF_8)).doesNotContain("timings");
    }

    @Test
    void unescapesTheContentAsJsonDoes() {
        String chunk = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\\\"b\\\\c\\n\\u00e9\\ud83e\\udd99 \u00fc\"}}]}";
        byte[] bytes = chunk.getBytes(StandardCharsets.UTF_8);
        ChatEvent event = new ChatEventScanner(JSON, null).scan(bytes, 0, bytes.length);
        assertThat(event.text()).isEqualTo("a\"b\\c\n\u00e9\uD83E\uDD99 \u00fc");
        assertThat(event.generated()).isTrue();
    }
}
