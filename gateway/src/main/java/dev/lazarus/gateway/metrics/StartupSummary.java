package dev.lazarus.gateway.metrics;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import dev.lazarus.backend.api.BackendHealth;
import dev.lazarus.backend.api.InferenceBackend;
import dev.lazarus.backend.api.ModelInfo;
import dev.lazarus.gateway.resilience.HealthMonitor;
import dev.lazarus.gateway.resilience.HealthResult;
import dev.lazarus.gateway.routing.BackendRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * One line at start that says what serves and how fast it can be: each backend's state, and for an in-JVM
 * engine where it runs (CPU, GPU) and on which kernels (Java Vector API or native), with whether this JVM has C2
 * (without it the Java kernels run about ten times slower). Logged when no backend is loading any more (after
 * a kt-native warm-up, at about the moment readiness turns UP), and once early if loading takes long.
 */
public final class StartupSummary implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StartupSummary.class);
    private static final Duration POLL = Duration.ofMillis(250);
    private static final int MAX_DETAIL = 120;

    private final BackendRegistry backends;
    private final HealthMonitor monitor;
    private final String jit;
    private final Duration interimAfter;
    private volatile String access = "";
    private volatile Disposable waiting;

    public StartupSummary(BackendRegistry backends, HealthMonitor monitor, Duration interimAfter) {
        this(backends, monitor, jit(StartupSummary::hotSpotOption), interimAfter);
    }

    StartupSummary(BackendRegistry backends, HealthMonitor monitor, String jit, Duration interimAfter) {
        this.backends = backends;
        this.monitor = monitor;
        this.jit = jit;
        this.interimAfter = interimAfter;
    }

    /**
     * Says who may call the gateway: {@code API keys: on (2) | off}, {@code admin: on | off}; and warns once when
     * it listens beyond this machine with no API key (anyone who reaches the port may use it).
     */
    public void access(String address, int apiKeys, boolean admin) {
        access = " [API keys: " + (apiKeys > 0 ? "on (" + apiKeys + ")" : "off") + ", admin: " + (admin ? "on" : "off") + "]";
        if (apiKeys == 0 && !loopback(address)) {
            log.warn("Lazarus listens on {} without API keys: anyone who reaches this port can use every model."
                    + " Set lazarus.security.api-keys, or bind 127.0.0.1 (server.address)",
                    address == null || address.isBlank() ? "every address" : address);
        }
    }

    /** Whether {@code address} (server.address; unset means every interface) is this machine only. */
    static boolean loopback(String address) {
        if (address == null || address.isBlank()) {
            return false;
        }
        String a = address.startsWith("[") ? address.substring(1, address.length() - 1) : address;
        return a.equals("localhost") || a.startsWith("127.") || a.equals("::1") || a.equals("0:0:0:0:0:0:0:1");
    }

    /** Logs the line for the gateway at {@code url} once every backend has settled. */
    public void logWhenSettled(String url) {
        long start = System.nanoTime();
        boolean[] interimLogged = {false};
        waiting = Flux.interval(Duration.ZERO, POLL, Schedulers.boundedElastic())
                .filter(tick -> {
                    if (settled()) {
                        return true;
                    }
                    if (!interimLogged[0] && System.nanoTime() - start > interimAfter.toNanos()) {
                        interimLogged[0] = true;
                        log(url, "starting");
                    }
                    return false;
                })
                .take(1)
                .subscribe(tick -> log(url, "ready"));
    }

    private void log(String url, String state) {
        String line = line(url, state);
        if (jit.startsWith("C2")) {
            log.info(line);
        } else {
            log.warn(line);
        }
    }

    /** No backend loading, every one checked at least once. */
    boolean settled() {
        return backends.all().stream().allMatch(b -> monitor.latest(b.id())
                .map(r -> r.health().status() != BackendHealth.Status.LOADING).orElse(false));
    }

    String line(String url, String state) {
        String each = backends.all().stream().map(this::describe).collect(Collectors.joining("; "));
        return "Lazarus " + state + " on " + url + " (JIT: " + jit + ")" + access + ": "
                + (each.isEmpty() ? "no backends configured" : each);
    }

    /** {@code embedded (kt-native lazarus-tiny-moe): UP, CPU, Java kernels (java-vector-256: F32,F16)}. */
    private String describe(InferenceBackend backend) {
        var descriptor = backend.describe();
        String models = descriptor.models().stream().map(ModelInfo::id).collect(Collectors.joining(","));
        StringBuilder s = new StringBuilder(backend.id()).append(" (").append(descriptor.kind());
        if (!models.isEmpty()) {
            s.append(' ').append(models);
        }
        s.append("): ");
        Optional<BackendHealth> health = monitor.latest(backend.id()).map(HealthResult::health);
        s.append(health.map(h -> h.status().name()).orElse("not checked yet"));
        health.filter(h -> h.status() != BackendHealth.Status.UP).map(BackendHealth::detail)
                .filter(d -> d != null && !d.isBlank()).ifPresent(d -> s.append(" (").append(shorten(d)).append(')'));
        descriptor.models().stream().findFirst().map(ModelInfo::metadata).ifPresent(meta -> speedClass(meta, s));
        return s.toString();
    }

    /** What an in-JVM engine reports as {@code device} and {@code kernels}; HTTP backends report neither. */
    private static void speedClass(Map<String, Object> meta, StringBuilder s) {
        Object device = meta.get("device");
        if (device != null) {
            s.append(", ").append(switch (device.toString()) {
                case "cpu" -> "CPU";
                case "cpu+gpu" -> "CPU+GPU" + (meta.get("gpu") == null ? "" : " (" + meta.get("gpu") + ")");
                default -> device.toString();
            });
        }
        Object kernels = meta.get("kernels");
        if (kernels != null) {
            String k = kernels.toString();
            s.append(", ").append(k.startsWith("java-") ? "Java kernels" : "native kernels").append(" (").append(k).append(')');
        }
    }

    private static String shorten(String detail) {
        String first = detail.lines().findFirst().orElse("");
        return first.length() <= MAX_DETAIL ? first : first.substring(0, MAX_DETAIL - 3) + "...";
    }

    /**
     * Which JIT compilers this JVM runs, from HotSpot's options: "C2", or why not ("C1 only
     * (-XX:TieredStopAtLevel=1)" is what spring-boot:run's optimized launch gives).
     */
    static String jit(Function<String, String> option) {
        if ("false".equals(option.apply("UseCompiler"))) {
            return "interpreter only (-Xint): the Java kernels run very slowly";
        }
        String stop = option.apply("TieredStopAtLevel");
        if ("true".equals(option.apply("TieredCompilation")) && stop != null && Integer.parseInt(stop) < 4) {
            return "C1 only (-XX:TieredStopAtLevel=" + stop + "): the Java kernels run about 10x slower";
        }
        return "C2";
    }

    private static String hotSpotOption(String name) {
        try {
            return Optional.ofNullable(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class))
                    .map(bean -> bean.getVMOption(name)).map(VMOption::getValue).orElse(null);
        } catch (IllegalArgumentException e) {
            return null; // not HotSpot, or no such option: assume the default compilers
        }
    }

    @Override
    public void close() {
        Disposable w = waiting;
        if (w != null) {
            w.dispose();
        }
    }

    /** The gateway's base URL for the line; {@code port} null: no web server (some tests). */
    static String url(String address, String port) {
        if (port == null) {
            return "no web server";
        }
        String host = address == null || address.isBlank() ? "0.0.0.0" : address;
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port + "/v1";
    }
}
