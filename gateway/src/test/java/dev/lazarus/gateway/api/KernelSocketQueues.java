package dev.lazarus.gateway.api;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The bytes Linux holds in the send and receive queues of the TCP connections to some local ports, from
 * {@code /proc/net/tcp} and {@code tcp6}: what a relay's peers wrote and read minus these is what the relay
 * itself holds.
 */
final class KernelSocketQueues {

    private KernelSocketQueues() {}

    /** The queued bytes of every established connection from or to one of {@code ports}. */
    static long queuedBytes(Set<Integer> ports) throws IOException {
        long total = 0;
        for (String file : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path path = Path.of(file);
            if (!Files.exists(path)) {
                continue;
            }
            List<String> lines = Files.readAllLines(path);
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                // sl local rem st tx_queue:rx_queue ...; 01 = ESTABLISHED, 08 = CLOSE_WAIT
                if (!f[3].equals("01") && !f[3].equals("08")) {
                    continue;
                }
                int local = port(f[1]);
                int remote = port(f[2]);
                if (ports.contains(local) || ports.contains(remote)) {
                    String[] queues = f[4].split(":");
                    total += Long.parseLong(queues[0], 16) + Long.parseLong(queues[1], 16);
                }
            }
        }
        return total;
    }

    private static int port(String address) {
        return Integer.parseInt(address.substring(address.indexOf(':') + 1), 16);
    }
}
