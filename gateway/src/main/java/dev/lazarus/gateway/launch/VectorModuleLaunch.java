package dev.lazarus.gateway.launch;

import java.lang.management.ManagementFactory;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Makes {@code java -jar gateway.jar} with no flags work. The kt-native engine needs the incubating Vector API
 * module, which the JVM resolves only when asked ({@code --add-modules}); no manifest attribute can ask for it
 * ({@code Launcher-Agent-Class}, {@code Add-Opens} and {@code Enable-Native-Access} cannot add a module to the
 * boot layer). So when the module is missing, {@code main} starts the same {@code java} again with the flags and
 * the same JVM options and arguments, and waits for it: one process tree, same exit code.
 *
 * <p>Where a second JVM would surprise (an agent or debugger attached to this one, not started with
 * {@code -jar}, or {@code -Dlazarus.relaunch=false}), it stops instead with one line naming the flags.
 */
public final class VectorModuleLaunch {

    static final String MODULE = "jdk.incubator.vector";
    /** What the README and the Docker image pass; the relaunch adds exactly these. */
    public static final List<String> FLAGS = List.of("--add-modules=" + MODULE, "--enable-native-access=ALL-UNNAMED");
    static final String RELAUNCH_PROPERTY = "lazarus.relaunch";
    /** Set on the relaunched JVM: the pid of the JVM that waits for it (it exits when that one is killed). */
    static final String PARENT_PROPERTY = "lazarus.relaunched-by";
    /** How long a stopping parent gives the gateway for its graceful shutdown before killing it. */
    private static final long STOP_GRACE_SECONDS = 40;

    private VectorModuleLaunch() {}

    /** What {@code main} does: go on, start the JVM again with {@code command}, or stop with {@code message}. */
    sealed interface Plan {
        record Proceed() implements Plan {}

        record Relaunch(List<String> command) implements Plan {}

        record Stop(String message) implements Plan {}
    }

    /**
     * Returns when this JVM has the module (or runs the relaunched gateway and exits with its status, or exits
     * with the one-line reason when it cannot).
     */
    public static void ensure(String[] args) {
        watchParent();
        if (ModuleLayer.boot().findModule(MODULE).isPresent()) {
            return; // the usual case: nothing more to look up
        }
        Plan plan = plan(false,
                ModuleFinder.ofSystem().find(MODULE).isPresent(), System.getProperty(RELAUNCH_PROPERTY),
                ManagementFactory.getRuntimeMXBean().getInputArguments(), System.getProperty("java.class.path", ""),
                System.getProperty("sun.java.command", ""), Path.of(System.getProperty("java.home"), "bin", "java"),
                ProcessHandle.current().pid(), args);
        switch (plan) {
            case Plan.Proceed _ -> { }
            case Plan.Stop stop -> {
                System.err.println(stop.message());
                System.exit(2);
            }
            case Plan.Relaunch relaunch -> System.exit(run(relaunch.command()));
        }
    }

    /** The decision, from what this JVM is; no side effects. */
    static Plan plan(boolean moduleResolved, boolean moduleInRuntime, String relaunchProperty, List<String> jvmOptions,
                     String classPath, String javaCommand, Path javaBinary, long pid, String[] args) {
        if (moduleResolved) {
            return new Plan.Proceed();
        }
        String flags = String.join(" ", FLAGS);
        if (!moduleInRuntime) {
            return new Plan.Stop("lazarus: this Java runtime (" + javaBinary.getParent().getParent() + ") has no " + MODULE
                    + " module, which the kt-native engine needs: run the gateway on a full JDK 25");
        }
        String stop = "lazarus: the kt-native engine needs the Vector API module: start java with " + flags;
        if ("false".equals(relaunchProperty) || relaunchProperty != null && relaunchProperty.startsWith("done")) {
            return new Plan.Stop(stop);
        }
        // `java -jar x.jar a b` reports x.jar as both the class path and the command's first word
        boolean startedWithJar = classPath.endsWith(".jar") && !classPath.contains(java.io.File.pathSeparator)
                && (javaCommand.equals(classPath) || javaCommand.startsWith(classPath + " "));
        Optional<String> attached = jvmOptions.stream().filter(VectorModuleLaunch::attachesSomething).findFirst();
        if (!startedWithJar || attached.isPresent()) {
            return new Plan.Stop(stop + (attached.isPresent() ? " (not restarted for you: " + attached.get() + " is attached)" : ""));
        }
        List<String> command = new ArrayList<>();
        command.add(javaBinary.toString());
        command.addAll(FLAGS);
        command.addAll(jvmOptions); // JAVA_TOOL_OPTIONS and JDK_JAVA_OPTIONS are in here: the child's env drops them
        command.add("-D" + RELAUNCH_PROPERTY + "=done");
        command.add("-D" + PARENT_PROPERTY + "=" + pid);
        command.add("-jar");
        command.add(classPath);
        command.addAll(List.of(args));
        return new Plan.Relaunch(command);
    }

    /** An agent or debugger would be loaded twice (and a debug port bound twice). */
    private static boolean attachesSomething(String option) {
        return option.startsWith("-javaagent:") || option.startsWith("-agentlib:") || option.startsWith("-agentpath:")
                || option.startsWith("-Xrun") || option.equals("-Xdebug");
    }

    /** Runs the gateway in a child JVM sharing this one's terminal; stopping this JVM stops it gracefully. */
    private static int run(List<String> command) {
        System.err.println("lazarus: restarting the JVM with " + String.join(" ", FLAGS)
                + " (the kt-native engine needs them; pass them to java yourself to start once)");
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().remove("JAVA_TOOL_OPTIONS"); // already among the options passed on
        builder.environment().remove("JDK_JAVA_OPTIONS");
        Process child;
        try {
            child = builder.start();
        } catch (java.io.IOException e) {
            System.err.println("lazarus: could not restart java (" + e.getMessage() + "): start it with "
                    + String.join(" ", FLAGS));
            return 2;
        }
        // SIGTERM/SIGINT to this JVM: pass it on as SIGTERM and wait for the graceful shutdown
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (child.isAlive()) {
                child.destroy();
                try {
                    if (!child.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS)) {
                        child.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    child.destroyForcibly();
                }
            }
        }, "lazarus-relaunch-stop"));
        while (true) {
            try {
                return child.waitFor();
            } catch (InterruptedException e) {
                // keep waiting: only the child's end ends this JVM
            }
        }
    }

    /** In the relaunched JVM: when the JVM that started it dies (even by SIGKILL), shut down too. */
    private static void watchParent() {
        String parent = System.getProperty(PARENT_PROPERTY);
        if (parent == null) {
            return;
        }
        try {
            ProcessHandle.of(Long.parseLong(parent)).ifPresentOrElse(
                    p -> p.onExit().thenRun(() -> System.exit(143)), () -> System.exit(143));
        } catch (NumberFormatException e) {
            // not ours to judge: no watch
        }
    }
}
