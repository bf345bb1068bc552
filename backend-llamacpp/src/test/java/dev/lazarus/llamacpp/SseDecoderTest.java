package dev.lazarus.llamacpp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseDecoderTest {

    private static final String STREAM = """
            : keep-alive comment
            data: {"a":"héllo 🦙"}

            data: line one
            data: line two

            event: ping
            data: {}

            error: {"code":500,"message":"Context size has been exceeded.","type":"server_error"}

            data: [DONE]

            """;

    @Test
    void decodesEventsWhateverTheFrameBoundaries() {
        byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
        List<SseDecoder.Event> whole = new SseDecoder().feed(bytes);
        assertThat(whole).extracting(SseDecoder.Event::name, SseDecoder.Event::data).containsExactly(
                org.assertj.core.groups.Tuple.tuple("message", "{\"a\":\"héllo 🦙\"}"),
                org.assertj.core.groups.Tuple.tuple("message", "line one\nline two"),
                org.assertj.core.groups.Tuple.tuple("ping", "{}"),
                org.assertj.core.groups.Tuple.tuple("error", "{\"code\":500,\"message\":\"Context size has been exceeded.\",\"type\":\"server_error\"}"),
                org.assertj.core.groups.Tuple.tuple("message", "[DONE]"));
        assertThat(whole.get(3).isError()).isTrue();
        assertThat(whole.get(4).isDone()).isTrue();

        // every split point, including inside the multi-byte characters
        for (int cut = 1; cut < bytes.length; cut++) {
            SseDecoder decoder = new SseDecoder();
            List<SseDecoder.Event> events = new ArrayList<>(decoder.feed(Arrays.copyOfRange(bytes, 0, cut)));
            events.addAll(decoder.feed(Arrays.copyOfRange(bytes, cut, bytes.length)));
            assertThat(events).as("cut at %d", cut).isEqualTo(whole);
            assertThat(decoder.hasPartialEvent()).isFalse();
        }
    }

    @Test
    void acceptsCrLfAndBareCrEvenWhenTheCrLfIsSplit() {
        SseDecoder decoder = new SseDecoder();
        List<SseDecoder.Event> events = new ArrayList<>(decoder.feed("data: a\r".getBytes(StandardCharsets.UTF_8)));
        events.addAll(decoder.feed("\n\r\ndata:b\r\rdata: c\n\n".getBytes(StandardCharsets.UTF_8)));
        assertThat(events).extracting(SseDecoder.Event::data).containsExactly("a", "b", "c");
    }

    @Test
    void reportsAnEventCutOff() {
        SseDecoder decoder = new SseDecoder();
        assertThat(decoder.feed("data: {\"half\":".getBytes(StandardCharsets.UTF_8))).isEmpty();
        assertThat(decoder.hasPartialEvent()).isTrue();
    }

    @Test
    void refusesAnEndlessLine() {
        SseDecoder decoder = new SseDecoder();
        byte[] big = new byte[SseDecoder.MAX_LINE_BYTES + 1];
        Arrays.fill(big, (byte) 'x');
        assertThatThrownBy(() -> decoder.feed(big)).isInstanceOf(SseDecoder.MalformedStreamException.class);
    }
}
