package dev.lazarus.gateway.policy;

/**
 * This gateway's name among the replicas that share a policy store: it holds leases, signs what it
 * publishes (breaker openings, live figures) and shows in the journal.
 *
 * @param id {@code lazarus.policy.replica-id}, else host name and process id
 */
public record Replica(String id) {

    public static Replica named(String configured) {
        if (configured != null && !configured.isBlank()) {
            return new Replica(configured.strip());
        }
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = "localhost";
        }
        return new Replica(host + "-" + ProcessHandle.current().pid());
    }
}
