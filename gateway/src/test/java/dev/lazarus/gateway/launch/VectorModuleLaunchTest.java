package dev.lazarus.gateway.launch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.launch.VectorModuleLaunch.Plan;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When {@code main} relaunches the JVM with the Vector API module, and when it stops with one line instead. */
class VectorModuleLaunchTest {

    private static final Path JAVA = Path.of("/opt/jdk-25/bin/java");
    private static final String JAR = "/srv/lazarus/gateway.jar";
    private static final String[] ARGS = {"--server.port=9000", "--spring.config.additional-location=file:my config.yml"};

    private static Plan plan(boolean resolved, String relaunch, List<String> options, String classPath, String command) {
        return VectorModuleLaunch.plan(resolved, true, relaunch, options, classPath, command, JAVA, 4242, ARGS);
    }

    @Test
    void aJvmWithTheModuleGoesOn() {
        assertThat(plan(true, null, List.of(), JAR, JAR)).isInstanceOf(Plan.Proceed.class);
    }

    @Test
    void javaDashJarWithoutTheModuleIsRelaunchedWithTheFlagsAndEverythingElseKept() {
        Plan plan = plan(false, null, List.of("-Xmx2g", "-Dfrom.tool.options=1"), JAR,
                JAR + " --server.port=9000 --spring.config.additional-location=file:my config.yml");
        assertThat(plan).isInstanceOf(Plan.Relaunch.class);
        assertThat(((Plan.Relaunch) plan).command()).containsExactly(JAVA.toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx2g",
                "-Dfrom.tool.options=1", "-Dlazarus.relaunch=done", "-Dlazarus.relaunched-by=4242", "-jar", JAR,
                "--server.port=9000", "--spring.config.additional-location=file:my config.yml");
    }

    @Test
    void anAttachedAgentOrDebuggerIsNotDuplicated() {
        Plan plan = plan(false, null, List.of("-agentlib:jdwp=transport=dt_socket,server=y,address=5005"), JAR, JAR);
        assertThat(plan).isInstanceOf(Plan.Stop.class);
        assertThat(((Plan.Stop) plan).message()).contains("--add-modules=jdk.incubator.vector")
                .contains("-agentlib:jdwp").doesNotContain("\n");
    }

    @Test
    void aClassPathStartOrTheOptOutStopsWithOneLineNamingTheFlags() {
        for (Plan plan : List.of(plan(false, null, List.of(), "a.jar:b.jar", "dev.lazarus.gateway.LazarusGatewayApplication"),
                plan(false, "false", List.of(), JAR, JAR),
                plan(false, "done", List.of(), JAR, JAR))) { // a relaunch that still lacks it: no loop
            assertThat(plan).isInstanceOf(Plan.Stop.class);
            assertThat(((Plan.Stop) plan).message())
                    .isEqualTo("lazarus: the kt-native engine needs the Vector API module: start java with"
                            + " --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED");
        }
    }

    @Test
    void aRuntimeWithoutTheModuleSaysSo() {
        Plan plan = VectorModuleLaunch.plan(false, false, null, List.of(), JAR, JAR, JAVA, 1, ARGS);
        assertThat(((Plan.Stop) plan).message()).contains("/opt/jdk-25").contains("full JDK 25");
    }
}
