package dev.lazarus.llamacpp.process;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Stops a process and every process it started, by PID: SIGTERM to all, then SIGKILL to whatever
 * is still alive after the grace period. The descendants are listed before the root is signalled,
 * because once the root (say a wrapper script) dies its children are re-parented and no longer
 * found through it.
 */
final class ProcessTree {

    private ProcessTree() {}

    /** Stops the tree; returns once every process of it has exited or been sent SIGKILL. */
    static void terminate(ProcessHandle root, Duration grace) {
        Set<ProcessHandle> tree = members(root);
        tree.forEach(ProcessHandle::destroy);
        if (!awaitExit(tree, grace)) {
            // Anything it started during the grace period belongs to the tree too.
            tree.addAll(members(root));
            tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
            awaitExit(tree, Duration.ofSeconds(5));
        }
    }

    private static Set<ProcessHandle> members(ProcessHandle root) {
        Set<ProcessHandle> tree = new LinkedHashSet<>();
        root.descendants().forEach(tree::add);
        tree.add(root);
        return tree;
    }

    private static boolean awaitExit(Set<ProcessHandle> processes, Duration timeout) {
        CompletableFuture<?>[] exits = processes.stream().map(ProcessHandle::onExit).toArray(CompletableFuture[]::new);
        try {
            CompletableFuture.allOf(exits).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return false;
        }
    }
}
