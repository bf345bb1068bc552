import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordingFile;

/**
 * The hottest methods of a JFR recording's execution samples ({@code jdk.ExecutionSample}): self (the
 * sampled frame) and total (anywhere on the sampled stack, once per sample), as shares of all samples.
 * For scripts/bench-gateway.sh; run as a source file: {@code java JfrTop.java recording.jfr [top]}.
 * With a third argument, a method ({@code NioIoHandler.wakeup}), it prints the commonest stacks under
 * which that method was sampled instead: who calls it.
 */
public class JfrTop {

    public static void main(String[] args) throws Exception {
        int top = args.length > 1 ? Integer.parseInt(args[1]) : 25;
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> total = new HashMap<>();
        Map<String, Integer> ownTotal = new HashMap<>();
        Map<String, Integer> selfByArea = new HashMap<>();
        String callersOf = args.length > 2 ? args[2] : null;
        Map<String, Integer> stacks = new HashMap<>();
        int samples = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(Path.of(args[0]))) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample") || event.getStackTrace() == null) {
                continue;
            }
            List<RecordedFrame> frames = event.getStackTrace().getFrames();
            if (frames.isEmpty()) {
                continue;
            }
            samples++;
            if (callersOf != null) {
                int at = -1;
                for (int i = 0; i < frames.size() && at < 0; i++) {
                    at = name(frames.get(i).getMethod()).equals(callersOf) ? i : -1;
                }
                if (at >= 0) {
                    StringBuilder stack = new StringBuilder();
                    for (int i = at; i < Math.min(frames.size(), at + 14); i++) {
                        stack.append(i == at ? "" : " < ").append(name(frames.get(i).getMethod()));
                    }
                    stacks.merge(stack.toString(), 1, Integer::sum);
                }
                continue;
            }
            self.merge(name(frames.getFirst().getMethod()), 1, Integer::sum);
            selfByArea.merge(area(frames.getFirst().getMethod()), 1, Integer::sum);
            Set<String> seen = new HashSet<>();
            for (RecordedFrame frame : frames) {
                String name = name(frame.getMethod());
                if (seen.add(name)) {
                    total.merge(name, 1, Integer::sum);
                    // hidden classes (lambdas) say nothing by their names
                    if (frame.getMethod().getType().getName().startsWith("dev.lazarus.") && !name.startsWith("0x")) {
                        ownTotal.merge(name, 1, Integer::sum);
                    }
                }
            }
        }
        System.out.printf("%d execution samples%n%n", samples);
        if (callersOf != null) {
            print("stacks under " + callersOf, stacks, samples, top);
            return;
        }
        print("self", self, samples, top);
        print("self, by library", selfByArea, samples, top);
        print("total (on the stack)", total, samples, top);
        print("total, the gateway's own methods (dev.lazarus)", ownTotal, samples, top);
    }

    private static String name(RecordedMethod method) {
        String type = method.getType().getName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + method.getName();
    }

    /** The library a method belongs to: the first two or three parts of its package. */
    private static String area(RecordedMethod method) {
        String[] parts = method.getType().getName().split("\\.");
        if (parts.length < 3) {
            return parts[0];
        }
        return parts[0].equals("java") || parts[0].equals("jdk") || parts[0].equals("sun")
                ? parts[0] + "." + parts[1]
                : parts[0] + "." + parts[1] + (parts.length > 3 ? "." + parts[2] : "");
    }

    private static void print(String title, Map<String, Integer> counts, int samples, int top) {
        System.out.printf("| %s | samples | %% |%n|---|---|---|%n", title);
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(top)
                .forEach(e -> System.out.printf("| `%s` | %d | %.1f |%n", e.getKey(), e.getValue(),
                        100.0 * e.getValue() / samples));
        System.out.println();
    }
}
