package dev.lazarus.kt.placement;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** How experts are ranked for the fast tiers (KTransformers' expert placement strategies). */
public enum PlacementStrategy {
    /** The same number of experts in every layer, by expert id: no statistics needed. */
    UNIFORM,
    /** The experts routed to most often according to saved routing statistics, wherever they are. */
    FREQUENCY,
    /** Whole layers from the first one on: early layers fully fast, later ones not at all. */
    FRONT_LOADING,
    /** Starts as {@link #FREQUENCY} and is re-placed periodically from live routing counts while serving. */
    DYNAMIC;

    public String id() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static PlacementStrategy of(String id) {
        for (PlacementStrategy s : values()) {
            if (s.id().equals(id.trim().toLowerCase(Locale.ROOT))) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown placement strategy '" + id + "' (one of "
                + Arrays.stream(values()).map(PlacementStrategy::id).collect(Collectors.joining(", ")) + ")");
    }
}
