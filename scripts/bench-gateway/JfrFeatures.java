import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * What each gateway feature costs under load, read from a JFR recording of the relay (issue 13, "measure
 * what each costs"): the share of execution samples with a frame of the feature's classes anywhere on the
 * stack (a sample counts once per feature; features may overlap, e.g. both decorators' clocks). Measured
 * from the profile of the build as it ships, not through switches in the main code. The Reactor operator
 * that carries a feature (its tap) is Reactor's, not the feature's: the shares are what the feature's own
 * code and its libraries cost. For scripts/bench-gateway.sh; {@code java JfrFeatures.java recording.jfr}.
 */
public class JfrFeatures {

    /** Feature → the class-name prefixes whose frames are its work. */
    private static final Map<String, List<String>> FEATURES = new LinkedHashMap<>();

    static {
        FEATURES.put("circuit breaker + live stats", List.of("dev.lazarus.gateway.resilience.CircuitBreakerDecorator",
                "dev.lazarus.gateway.resilience.BackendStats", "dev.lazarus.gateway.resilience.BackendBreakers",
                "io.github.resilience4j."));
        FEATURES.put("metering (TTFT, tok/s, tokens, calls)", List.of("dev.lazarus.gateway.metrics.",
                "io.micrometer."));
        FEATURES.put("resume capture (transcript, token ids)", List.of(
                "dev.lazarus.gateway.resilience.TranscriptDecorator", "dev.lazarus.gateway.resilience.Transcript",
                "dev.lazarus.llamacpp.TokenRecorder", "dev.lazarus.gateway.resilience.ResumingStreamResumer"));
        FEATURES.put("API keys", List.of("dev.lazarus.gateway.api.ApiKeyFilter", "dev.lazarus.gateway.api.BearerTokens"));
        FEATURES.put("first-token timeout, same-backend retry", List.of(
                "dev.lazarus.gateway.resilience.FirstTokenTimeoutDecorator",
                "dev.lazarus.gateway.resilience.FirstSignalTimeout",
                "dev.lazarus.gateway.resilience.SameBackendRetryDecorator"));
        FEATURES.put("policy (fatal-error rule, planner, filters)", List.of("dev.lazarus.gateway.policy."));
        FEATURES.put("request reading and validation", List.of("dev.lazarus.gateway.api.RawBodyReader",
                "dev.lazarus.gateway.api.ChatRequestFields", "dev.lazarus.gateway.api.CompletionRequestFields",
                "dev.lazarus.gateway.api.RequestReader", "dev.lazarus.gateway.api.RequestValidator"));
        FEATURES.put("upstream stream reading (SSE, chunk reader, event scan)", List.of("dev.lazarus.llamacpp.wire.SseDecoder",
                "dev.lazarus.llamacpp.wire.ChatChunkReader", "dev.lazarus.llamacpp.wire.ChatEventScanner",
                "dev.lazarus.llamacpp.wire.WholeAnswerReader"));
        FEATURES.put("response writing", List.of("dev.lazarus.gateway.api.ResponseWriter",
                "dev.lazarus.gateway.api.ChunkShape", "dev.lazarus.backend.api.openai.RawJson"));
    }

    /** Where the sampled (top) frame is: the library that spends the time itself. */
    private static final Map<String, String> AREAS = new LinkedHashMap<>();

    static {
        AREAS.put("reactor.netty.", "reactor-netty");
        AREAS.put("reactor.", "Reactor core");
        AREAS.put("io.netty.", "Netty");
        AREAS.put("org.springframework.", "Spring");
        AREAS.put("dev.lazarus.", "Lazarus");
        AREAS.put("tools.jackson.", "Jackson");
        AREAS.put("io.micrometer.", "Micrometer");
        AREAS.put("io.github.resilience4j.", "Resilience4j");
        AREAS.put("java.", "JDK");
        AREAS.put("jdk.", "JDK");
        AREAS.put("sun.", "JDK");
    }

    public static void main(String[] args) throws Exception {
        Map<String, Integer> byFeature = new LinkedHashMap<>();
        Map<String, Integer> byArea = new LinkedHashMap<>();
        FEATURES.keySet().forEach(f -> byFeature.put(f, 0));
        int samples = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(Path.of(args[0]))) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample") || event.getStackTrace() == null
                    || event.getStackTrace().getFrames().isEmpty()) {
                continue;
            }
            List<RecordedFrame> frames = event.getStackTrace().getFrames();
            samples++;
            for (var feature : FEATURES.entrySet()) {
                if (frames.stream().anyMatch(f -> matches(f, feature.getValue()))) {
                    byFeature.merge(feature.getKey(), 1, Integer::sum);
                }
            }
            String top = frames.getFirst().getMethod().getType().getName();
            String area = AREAS.entrySet().stream().filter(a -> top.startsWith(a.getKey())).map(Map.Entry::getValue)
                    .findFirst().orElse("other");
            byArea.merge(area, 1, Integer::sum);
        }
        System.out.printf("%d execution samples%n%n| feature (frames anywhere on the stack) | share of samples |%n|---|---|%n",
                samples);
        for (var e : byFeature.entrySet()) {
            System.out.printf("| %s | %.1f %% |%n", e.getKey(), 100.0 * e.getValue() / samples);
        }
        System.out.printf("%n| sampled frame's library (self) | share |%n|---|---|%n");
        int total = samples;
        byArea.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .forEach(e -> System.out.printf("| %s | %.1f %% |%n", e.getKey(), 100.0 * e.getValue() / total));
    }

    private static boolean matches(RecordedFrame frame, List<String> prefixes) {
        String type = frame.getMethod().getType().getName();
        for (String prefix : prefixes) {
            if (type.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }
}
