package dev.lazarus.llamacpp.wire;

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

    @Test
    void decodesAByteAtATimeAndInThreePieces() {
        byte[] bytes = STREAM.replace("\n", "\r\n").getBytes(StandardCharsets.UTF_8);
        List<SseDecoder.Event> whole = new SseDecoder().feed(bytes);
        assertThat(whole).hasSize(5);

        SseDecoder single = new SseDecoder();
        List<SseDecoder.Event> events = new ArrayList<>();
        for (byte b : bytes) {
            events.addAll(single.feed(new byte[] {b}));
        }
        assertThat(events).isEqualTo(whole);

        for (int a = 1; a < bytes.length; a += 7) {
            for (int b = a; b < bytes.length; b += 5) {
                SseDecoder decoder = new SseDecoder();
                List<SseDecoder.Event> three = new ArrayList<>(decoder.feed(Arrays.copyOfRange(bytes, 0, a)));
                three.addAll(decoder.feed(Arrays.copyOfRange(bytes, a, b)));
                three.addAll(decoder.feed(Arrays.copyOfRange(bytes, b, bytes.length)));
                assertThat(three).as("cuts at %d and %d", a, b).isEqualTo(whole);
            }
        }
    }

    @Test
    void readsAPieceInTheMiddleOfALargerArray() {
        byte[] framed = "XXdata: {\"k\":1}\n\nYY".getBytes(StandardCharsets.UTF_8);
        SseDecoder.Event event = new SseDecoder().feed(framed, 2, framed.length - 2).getFirst();
        assertThat(event.data()).isEqualTo("{\"k\":1}");
        assertThat(new String(event.bytes(), event.offset(), event.length(), StandardCharsets.UTF_8)).isEqualTo("{\"k\":1}");
    }

    @Test
    void joinsMultiLineDataFedInPiecesWithCrLf() {
        SseDecoder decoder = new SseDecoder();
        List<SseDecoder.Event> events = new ArrayList<>();
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            String line = "line " + i + " ".repeat(i % 13);
            expected.append(i == 0 ? "" : "\n").append(line);
            // each line in two pieces, the CR and LF of its end in different ones
            events.addAll(decoder.feed(("data:" + line + "\r").getBytes(StandardCharsets.UTF_8)));
            events.addAll(decoder.feed("\n".getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(events).isEmpty();
        assertThat(decoder.hasPartialEvent()).isTrue();
        events.addAll(decoder.feed("\r\n".getBytes(StandardCharsets.UTF_8)));
        assertThat(events).extracting(SseDecoder.Event::data).containsExactly(expected.toString());
        assertThat(decoder.hasPartialEvent()).isFalse();
    }

    @Test
    void decodesLargeEventsAcrossManyPieces() {
        String big = "{\"content\":\"" + "é🦙x".repeat(150_000) + "\"}";
        String stream = "data: " + big + "\n\ndata: small\n\ndata: " + big + "\ndata: tail\n\n";
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        for (int size : new int[] {1000, 8192, 65_536}) {
            SseDecoder decoder = new SseDecoder();
            List<SseDecoder.Event> events = new ArrayList<>();
            for (int from = 0; from < bytes.length; from += size) {
                events.addAll(decoder.feed(Arrays.copyOfRange(bytes, from, Math.min(bytes.length, from + size))));
            }
            assertThat(events).as("pieces of %d", size).extracting(SseDecoder.Event::data)
                    .containsExactly(big, "small", big + "\ntail");
        }
    }

    @Test
    void keepsAnEventIntactWhileLaterPiecesArrive() {
        SseDecoder decoder = new SseDecoder();
        List<SseDecoder.Event> events = new ArrayList<>(decoder.feed("data: fir".getBytes(StandardCharsets.UTF_8)));
        events.addAll(decoder.feed("st\n\ndata: sec".getBytes(StandardCharsets.UTF_8)));
        events.addAll(decoder.feed("ond-is-longer\n\ndata: third, also cut".getBytes(StandardCharsets.UTF_8)));
        events.addAll(decoder.feed("\n\n".getBytes(StandardCharsets.UTF_8)));
        assertThat(events).extracting(SseDecoder.Event::data).containsExactly("first", "second-is-longer", "third, also cut");
    }

    @Test
    void recognisesDoneWithSurroundingSpace() {
        List<SseDecoder.Event> events = new SseDecoder().feed("data:  [DONE] \n\ndata: [DONE]x\n\ndata: [DON\n\n"
                .getBytes(StandardCharsets.UTF_8));
        assertThat(events).extracting(SseDecoder.Event::isDone).containsExactly(true, false, false);
    }

    @Test
    void refusesAnEndlessLineThatComesInPieces() {
        SseDecoder decoder = new SseDecoder();
        byte[] piece = new byte[1024 * 1024];
        Arrays.fill(piece, (byte) 'x');
        assertThatThrownBy(() -> {
            for (int i = 0; i <= SseDecoder.MAX_LINE_BYTES / piece.length; i++) {
                decoder.feed(piece);
            }
        }).isInstanceOf(SseDecoder.MalformedStreamException.class);
    }
}
