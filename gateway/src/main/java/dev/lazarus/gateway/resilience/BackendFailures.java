package dev.lazarus.gateway.resilience;

import dev.lazarus.backend.api.BackendException;

/**
 * Which failures count against a backend: its own faults (5xx answers, timeouts including stalls
 * between tokens, refused or reset connections, engine errors). A request the backend could not
 * serve but another might (context too long, model not loaded), a busy backend and a malformed
 * request do not count.
 */
final class BackendFailures {

    private BackendFailures() {}

    static boolean counts(Throwable error) {
        return !(error instanceof BackendException be) || be.kind().backendFault();
    }
}
