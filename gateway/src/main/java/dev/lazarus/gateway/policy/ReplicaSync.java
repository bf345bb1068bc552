package dev.lazarus.gateway.policy;

/**
 * Brings another replica's changes into this one: when the shared store reports that something was
 * written (a transition, a route change), the engine and the route overrides re-read it. With the
 * embedded store nobody else writes and this does nothing.
 */
public final class ReplicaSync {

    private final boolean shared;

    private ReplicaSync(boolean shared) {
        this.shared = shared;
    }

    public static ReplicaSync attach(PolicyStore store, PolicyEngine engine, RouteOverrides overrides) {
        if (store.shared()) {
            store.onExternalChange(() -> {
                engine.refresh();
                overrides.refresh();
            });
        }
        return new ReplicaSync(store.shared());
    }

    /** Whether there are other replicas to hear from. */
    public boolean shared() {
        return shared;
    }
}
