package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.quant.q4k.Q4KInt16Kernel;
import dev.lazarus.kt.quant.q6k.Q6KInt16Kernel;
import dev.lazarus.kt.quant.q8_0.Q8_0Kernel;
import dev.lazarus.kt.tensor.NativeKernels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * C2 inlines every helper of ours that takes or returns a vector, into every kernel method it compiles, even with
 * the JIT profiles of all weight types in one JVM ({@link KernelJitWorkload}: the K-quant kernels first, as when
 * a Q4_K_M model runs before a Q8_0 one). A vector that crosses a call C2 did not inline is boxed on the heap at
 * every call: the Q8_0 prefill kernel, cut off that way once the K-quant kernels had run, was 4-7x slower (see
 * {@link Q8_0Kernel#dotVectors4}). Read from HotSpot's compilation log ({@code -XX:+LogCompilation}, a diagnostic
 * option of every HotSpot JVM), with compilation in the foreground ({@code -Xbatch}) so that the same run compiles
 * the same methods; nothing here measures time.
 */
class KernelInliningTest {

    private static final Pattern TASK = Pattern.compile("<task (.*?)>(.*?)</task>", Pattern.DOTALL);
    private static final Pattern METHOD = Pattern.compile(
            "<method id='(\\d+)' holder='(\\d+)' name='([^']+)'(?: return='(\\d+)')?(?: arguments='([\\d ]+)')?");
    private static final Pattern KLASS = Pattern.compile("<klass id='(\\d+)' name='([^']+)'");
    private static final Pattern EVENT = Pattern.compile("<call method='(\\d+)'|<inline_fail reason='([^']+)'");
    private static final Pattern ATTR = Pattern.compile("(\\w+)='([^']*)'");

    @Test
    void everyVectorPassingHelperIsInlinedWhateverRanBefore(@TempDir Path dir) throws IOException, InterruptedException {
        Path log = dir.resolve("compilation.log");
        Path out = dir.resolve("workload.out");
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xbatch",
                "-D" + KernelConfig.KERNELS_PROPERTY + "=java", // the Java kernels' inlining, whether or not native ones load
                "-XX:+UnlockDiagnosticVMOptions", "-XX:+LogCompilation", "-XX:LogFile=" + log,
                "-cp", System.getProperty("java.class.path"), KernelJitWorkload.class.getName());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("the workload did not finish in 5 minutes: " + Files.readString(out));
        }
        assertThat(p.exitValue()).as(Files.readString(out)).isZero();

        String text = Files.readString(log);
        List<String> compiledKernels = new ArrayList<>();
        List<String> cutOff = new ArrayList<>();
        Matcher task = TASK.matcher(text);
        while (task.find()) {
            Map<String, String> attrs = attributes(task.group(1));
            String method = attrs.getOrDefault("method", "");
            // C2 only ("level" 4, or no level when tiered compilation is off), methods of the kernels
            if (!method.matches("dev\\.lazarus\\.kt\\.(tensor|quant|matrix)\\..*") || !attrs.getOrDefault("level", "4").equals("4")) {
                continue;
            }
            compiledKernels.add(method);
            cutOff.addAll(vectorHelpersNotInlined(method, task.group(2)));
        }
        assertThat(compiledKernels).as("C2 compiled the kernels (else this test proves nothing)")
                .anyMatch(m -> m.startsWith("dev.lazarus.kt.quant.q8_0.Q8_0Kernel "))
                .anyMatch(m -> m.startsWith("dev.lazarus.kt.quant.q4k.Q4KInt16Kernel "))
                .anyMatch(m -> m.startsWith("dev.lazarus.kt.quant.q6k.Q6KInt16Kernel "));
        assertThat(cutOff).as("helpers of ours that pass vectors, left out of line by C2").isEmpty();
    }

    /** "caller: Holder::helper (reason)" for each helper of ours with a vector in its signature that C2 did not inline. */
    private static List<String> vectorHelpersNotInlined(String caller, String body) {
        Map<String, String> klasses = new HashMap<>();
        Matcher k = KLASS.matcher(body);
        while (k.find()) {
            klasses.put(k.group(1), k.group(2).replace('/', '.'));
        }
        Map<String, String> vectorHelpers = new HashMap<>();
        Matcher m = METHOD.matcher(body);
        while (m.find()) {
            String holder = klasses.getOrDefault(m.group(2), "");
            List<String> types = new ArrayList<>();
            if (m.group(4) != null) {
                types.add(m.group(4));
            }
            if (m.group(5) != null) {
                types.addAll(List.of(m.group(5).trim().split(" ")));
            }
            boolean passesVectors = types.stream().anyMatch(t -> klasses.getOrDefault(t, "").startsWith("jdk.incubator.vector."));
            if (holder.startsWith("dev.lazarus.") && passesVectors) {
                vectorHelpers.put(m.group(1), holder.substring(holder.lastIndexOf('.') + 1) + "::" + m.group(3));
            }
        }
        List<String> found = new ArrayList<>();
        String call = null;
        Matcher e = EVENT.matcher(body);
        while (e.find()) {
            if (e.group(1) != null) {
                call = e.group(1);
            } else if (call != null && vectorHelpers.containsKey(call)) {
                found.add("%s: %s (%s)".formatted(caller, vectorHelpers.get(call), e.group(2)));
            }
        }
        return found;
    }

    private static Map<String, String> attributes(String s) {
        Map<String, String> a = new HashMap<>();
        Matcher m = ATTR.matcher(s);
        while (m.find()) {
            a.put(m.group(1), m.group(2));
        }
        return a;
    }
}
