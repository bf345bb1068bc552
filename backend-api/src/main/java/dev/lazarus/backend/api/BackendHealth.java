package dev.lazarus.backend.api;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** A backend's health as its cheap check sees it. */
public record BackendHealth(Status status, String detail, Map<String, Object> details) {

    public enum Status {
        /** Ready to serve. */
        UP,
        /** Starting or loading weights; will be UP without intervention. */
        LOADING,
        /** Not serving. */
        DOWN
    }

    /** {@link #details()} key: how far a LOADING backend is, from 0 to 1. */
    public static final String PROGRESS = "progress";
    /** {@link #details()} key: the seconds a LOADING backend likely still needs, at its pace so far. */
    public static final String ETA_SECONDS = "eta_seconds";

    public BackendHealth {
        details = details == null ? Map.of() : Map.copyOf(details);
    }

    public static BackendHealth up() {
        return new BackendHealth(Status.UP, "ok", Map.of());
    }

    public static BackendHealth loading(String detail) {
        return new BackendHealth(Status.LOADING, detail, Map.of());
    }

    /**
     * LOADING with its {@link #PROGRESS} and, once some progress was made, its {@link #ETA_SECONDS} from the pace
     * so far (none at 0 or 1: nothing to extrapolate from, or a last phase whose length is unknown).
     *
     * @param elapsed time since loading started
     */
    public static BackendHealth loading(String detail, double progress, Duration elapsed) {
        Map<String, Object> details = new LinkedHashMap<>();
        double p = Math.clamp(progress, 0, 1);
        details.put(PROGRESS, p);
        if (p > 0 && p < 1) {
            details.put(ETA_SECONDS, Math.round(elapsed.toMillis() * (1 - p) / p / 1000));
        }
        return new BackendHealth(Status.LOADING, detail, details);
    }

    public static BackendHealth down(String detail) {
        return new BackendHealth(Status.DOWN, detail, Map.of());
    }

    public boolean isUp() {
        return status == Status.UP;
    }
}
