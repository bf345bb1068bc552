package dev.lazarus.kt.placement;

import dev.lazarus.kt.model.RoutingStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Routing statistics saved across restarts (what the {@code frequency} strategy ranks by), as JSON:
 * {@code {"format":1,"model":"…","layers":[1,2,…],"experts":N,"tokens":[[…],…]}}. The file names
 * the model's block ids and expert count; counts from another model are ignored, not misapplied.
 */
public final class RoutingStatsFile {

    static final int FORMAT = 1;
    private static final System.Logger LOG = System.getLogger(RoutingStatsFile.class.getName());
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The file's content. */
    record Content(int format, String model, List<Integer> layers, int experts, long[][] tokens) {}

    private RoutingStatsFile() {}

    /** Writes the counts atomically (a temp file renamed over the target). */
    public static void save(Path file, String model, ExpertCatalog catalog, RoutingStats stats) {
        List<Integer> layers = java.util.stream.IntStream.range(0, catalog.layerCount()).map(catalog::layerId).boxed().toList();
        Content c = new Content(FORMAT, model, layers, catalog.expertsPerLayer(), stats.counts());
        try {
            Path parent = file.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Path temp = Files.createTempFile(parent, file.getFileName().toString(), ".tmp");
            JSON.writeValue(temp.toFile(), c);
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | JacksonException e) {
            throw new UncheckedIOException("cannot save routing statistics to " + file,
                    e instanceof IOException io ? io : new IOException(e));
        }
    }

    /**
     * Seeds {@code stats} with the saved counts when {@code file} (may be null) exists and describes
     * the same expert layout; leaves them as they are otherwise (the reason is logged).
     *
     * @return whether counts were loaded
     */
    public static boolean loadInto(Path file, String model, ExpertCatalog catalog, RoutingStats stats) {
        return read(file, catalog).map(counts -> {
            stats.seed(counts);
            LOG.log(System.Logger.Level.INFO, "routing statistics for {0} loaded from {1}", model, file);
            return true;
        }).orElse(false);
    }

    static Optional<long[]> read(Path file, ExpertCatalog catalog) {
        if (file == null || !Files.isRegularFile(file)) {
            return Optional.empty();
        }
        Content c;
        try {
            c = JSON.readValue(file.toFile(), Content.class);
        } catch (JacksonException e) {
            LOG.log(System.Logger.Level.WARNING, "routing statistics {0} unreadable, starting fresh: {1}", file,
                    e.getOriginalMessage());
            return Optional.empty();
        }
        int layers = catalog.layerCount();
        boolean sameLayout = c.format() == FORMAT && c.experts() == catalog.expertsPerLayer() && c.layers() != null
                && c.layers().size() == layers && c.tokens() != null && c.tokens().length == layers;
        for (int s = 0; sameLayout && s < layers; s++) {
            sameLayout = c.layers().get(s) == catalog.layerId(s) && c.tokens()[s].length == c.experts();
        }
        if (!sameLayout) {
            LOG.log(System.Logger.Level.WARNING, "routing statistics {0} describe another expert layout, ignored", file);
            return Optional.empty();
        }
        long[] flat = new long[layers * c.experts()];
        for (int s = 0; s < layers; s++) {
            System.arraycopy(c.tokens()[s], 0, flat, s * c.experts(), c.experts());
        }
        return Optional.of(flat);
    }
}
