package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real child JVM writes policy transitions as fast as it can; the test kills it with SIGKILL in
 * the middle of that, then opens the store: every transition the child reported as committed is
 * there, in order, without gaps, and no record is corrupt.
 */
class JournalKillTest {

    private static final String COMMITTED = "committed ";

    @TempDir
    Path dir;

    @Test
    void everyCommittedRecordSurvivesKillDashNine() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                JournalWriter.class.getName(), dir.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        long lastReported = 0;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (!line.startsWith(COMMITTED)) {
                    continue; // log lines
                }
                lastReported = Long.parseLong(line.substring(COMMITTED.length()));
                if (lastReported >= 300) {
                    // SIGKILL by PID, while the child is still writing.
                    new ProcessBuilder("kill", "-9", Long.toString(child.pid())).start().waitFor(10, TimeUnit.SECONDS);
                    break;
                }
            }
        } finally {
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        }
        assertThat(child.exitValue()).as("killed by SIGKILL").isEqualTo(137);
        assertThat(lastReported).isGreaterThanOrEqualTo(300);

        try (PolicyStore store = PolicyStore.open(dir)) {
            List<AuditEvent> events = store.allEvents();
            assertThat(events.size()).isGreaterThanOrEqualTo((int) lastReported);
            for (int i = 0; i < events.size(); i++) {
                AuditEvent event = events.get(i);
                assertThat(event.seq()).isEqualTo(i + 1L);
                assertThat(event.backendId()).isIn("kt", "llama");
                assertThat(event.reason()).isNotNull();
            }
            // The state is the one the last surviving event says it is.
            AuditEvent last = events.getLast();
            BackendPolicyState stored = store.states().get(last.backendId());
            assertThat(stored.state()).isEqualTo(last.to());
            // And the engine starts on it.
            PolicyEngine engine = new PolicyEngine(store, Map.of("kt", Role.CANDIDATE, "llama", Role.ORACLE),
                    PreflightCheck.alwaysPasses(), Clock.systemUTC());
            engine.start();
            assertThat(engine.state("kt")).isPresent();
        }
    }

    /** The child: promotes and rolls back a candidate in a loop, printing each committed journal size. */
    public static final class JournalWriter {
        public static void main(String[] args) {
            PolicyStore store = PolicyStore.open(Path.of(args[0]));
            Map<String, Role> roles = new java.util.LinkedHashMap<>();
            roles.put("kt", Role.CANDIDATE);
            roles.put("llama", Role.ORACLE);
            PolicyEngine engine = new PolicyEngine(store, roles, PreflightCheck.alwaysPasses(), Clock.systemUTC());
            engine.start();
            for (long i = 0; ; i++) {
                engine.promote("kt", Actor.GATE, "GO in round " + i, Map.of("round", i, "tokens_per_second", 14.2));
                engine.rollback("kt", Actor.POLICY, "breaker opened 3 times in round " + i, Map.of("round", i));
                engine.enable("kt", Actor.OPERATOR, "re-armed in round " + i);
                System.out.println(COMMITTED + store.eventCount());
                System.out.flush();
            }
        }
    }
}
