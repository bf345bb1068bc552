package dev.lazarus.llamacpp.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The streams below are llama-server b11669's own (shortened), asked with {@code "return_progress": true} and without:
 * taken out of the first, the progress events leave the second, read by read, and each is told once.
 */
class PromptProgressTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static final String CHAT_ROLE = """
            {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"id":"c1",\
            "object":"chat.completion.chunk\"""";
    private static final String CHAT_ANSWER = "data: " + CHAT_ROLE + "}\n\n"
            + "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\" new\"}}],\"id\":\"c1\"}\n\n"
            + "data: {\"choices\":[],\"id\":\"c1\",\"usage\":{\"completion_tokens\":1,\"prompt_tokens\":181}}\n\n"
            + "data: [DONE]\n\n";

    private static String chatProgress(int processed) {
        return "data: " + CHAT_ROLE + ",\"timings\":{\"prompt_n\":" + processed + "},\"prompt_progress\":{\"total\":181,"
                + "\"cache\":0,\"processed\":" + processed + ",\"time_ms\":0}}\n\n";
    }

    private static String responseEvent(String type, String progress) {
        return "event: " + type + "\ndata: {\"type\":\"" + type + "\",\"response\":{\"id\":\"resp_1\",\"object\":\"response\","
                + "\"status\":\"in_progress\"}" + (progress == null ? "" : ",\"prompt_progress\":" + progress) + "}\n\n";
    }

    private static final String RESPONSE_ANSWER = """
            event: response.output_item.added
            data: {"type":"response.output_item.added","item":{"content":[],"id":"msg_1","role":"assistant"}}

            event: response.output_text.delta
            data: {"type":"response.output_text.delta","item_id":"msg_1","delta":"x"}

            event: response.completed
            data: {"type":"response.completed","response":{"id":"resp_1","status":"completed"}}

            """;

    private final List<int[]> told = new ArrayList<>();

    @Test
    void aChatStreamLosesItsProgressChunksAndEachIsTold() {
        PromptProgress progress = new PromptProgress(JSON, (processed, total) -> told.add(new int[] {processed, total}));
        List<List<SseDecoder.Event>> reads = List.of(
                read(chatProgress(0)), read(chatProgress(128)), read(chatProgress(181) + CHAT_ANSWER));

        List<List<SseDecoder.Event>> kept = reads.stream().map(progress::filter).toList();

        assertThat(kept.get(0)).isEmpty();
        assertThat(kept.get(1)).isEmpty();
        assertThat(kept.get(2)).isEqualTo(read(CHAT_ANSWER));
        assertThat(progress.rest()).isEmpty();
        assertThat(told).containsExactly(new int[] {0, 181}, new int[] {128, 181}, new int[] {181, 181});
    }

    @Test
    void theAnswerPassesUnreadOnceItBegan() {
        PromptProgress progress = new PromptProgress(JSON, (processed, total) -> told.add(new int[] {processed, total}));
        List<SseDecoder.Event> answer = read(CHAT_ANSWER);
        assertThat(progress.filter(answer)).isEqualTo(answer);
        // a chunk that names the field later (a tool call's arguments could) is the answer's
        List<SseDecoder.Event> later = read(chatProgress(5));
        assertThat(progress.filter(later)).isSameAs(later);
        assertThat(told).isEmpty();
    }

    @Test
    void aStreamWithoutProgressPassesAsItCame() {
        PromptProgress progress = new PromptProgress(JSON, null);
        assertThat(progress.filter(read(CHAT_ANSWER))).isEqualTo(read(CHAT_ANSWER));
    }

    /**
     * Responses: asked, the server opens the response before it reads the prompt and repeats {@code in_progress} with
     * the progress; the reader gets the opening events with the answer's first, as the server sends them unasked.
     */
    @Test
    void aResponsesStreamOpensWithItsAnswerAsWithoutProgress() {
        PromptProgress progress = new PromptProgress(JSON, (processed, total) -> told.add(new int[] {processed, total}));
        String first = "{\"total\":121,\"cache\":0,\"processed\":0,\"time_ms\":0}";
        String last = "{\"total\":121,\"cache\":0,\"processed\":121,\"time_ms\":1775}";

        List<SseDecoder.Event> opened = progress.filter(read(responseEvent("response.created", null)
                + responseEvent("response.in_progress", first)));
        List<SseDecoder.Event> progressed = progress.filter(read(responseEvent("response.in_progress", last)));
        List<SseDecoder.Event> answer = progress.filter(read(RESPONSE_ANSWER));

        assertThat(opened).isEmpty();
        assertThat(progressed).isEmpty();
        List<SseDecoder.Event> unasked = read(responseEvent("response.created", null)
                + responseEvent("response.in_progress", null) + RESPONSE_ANSWER);
        assertThat(answer).extracting(SseDecoder.Event::name).isEqualTo(unasked.stream().map(SseDecoder.Event::name).toList());
        assertThat(answer).extracting(e -> JSON.readTree(e.data()))
                .isEqualTo(unasked.stream().map(e -> JSON.readTree(e.data())).toList());
        assertThat(told).containsExactly(new int[] {0, 121}, new int[] {121, 121});
    }

    @Test
    void openingEventsOfAStreamCutBeforeItsAnswerAreLeftForItsReader() {
        PromptProgress progress = new PromptProgress(JSON, null);
        assertThat(progress.filter(read(responseEvent("response.created", null)))).isEmpty();
        assertThat(progress.rest()).extracting(SseDecoder.Event::name).containsExactly("response.created");
        assertThat(progress.rest()).isEmpty();
    }

    @Test
    void progressIsAskedForUnlessTheClientChose() {
        Map<String, Object> request = new HashMap<>();
        assertThat(PromptProgress.ask(request)).isTrue();
        assertThat(request).containsEntry("return_progress", true);
        Map<String, Object> chosen = new HashMap<>(Map.of("return_progress", false));
        assertThat(PromptProgress.ask(chosen)).isFalse();
        assertThat(chosen).containsEntry("return_progress", false);
    }

    private static List<SseDecoder.Event> read(String stream) {
        return new SseDecoder().feed(stream.getBytes(StandardCharsets.UTF_8));
    }
}
