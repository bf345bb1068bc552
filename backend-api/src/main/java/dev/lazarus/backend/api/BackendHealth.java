package dev.lazarus.backend.api;

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

    public BackendHealth {
        details = details == null ? Map.of() : Map.copyOf(details);
    }

    public static BackendHealth up() {
        return new BackendHealth(Status.UP, "ok", Map.of());
    }

    public static BackendHealth loading(String detail) {
        return new BackendHealth(Status.LOADING, detail, Map.of());
    }

    public static BackendHealth down(String detail) {
        return new BackendHealth(Status.DOWN, detail, Map.of());
    }

    public boolean isUp() {
        return status == Status.UP;
    }
}
