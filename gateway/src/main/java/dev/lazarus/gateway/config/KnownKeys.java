package dev.lazarus.gateway.config;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The shape of every {@code lazarus.*} key the gateway binds, from the configuration metadata the build generates
 * (its groups name the {@code @ConfigurationProperties} records, walked here component by component) and any
 * property it lists on its own. Answers whether a configured key means something, and if not, what was likely meant.
 */
final class KnownKeys {

    static final String ROOT = "lazarus";
    private static final String METADATA = "META-INF/spring-configuration-metadata.json";

    /** What may follow a key: named children, one index into a list, one map key, or nothing. */
    private sealed interface Shape {}

    private record Group(Map<String, String> names, Map<String, Shape> children) implements Shape {
        Group() {
            this(new LinkedHashMap<>(), new LinkedHashMap<>());
        }

        void put(String kebab, Shape shape) {
            String uniform = uniform(kebab);
            names.put(uniform, kebab);
            children.merge(uniform, shape, KnownKeys::merge);
        }
    }

    private record Listed(Shape element) implements Shape {}

    private record Keyed(Shape value) implements Shape {}

    private record Leaf() implements Shape {}

    /** Free-form (a {@code Map<String, Object>} value, such as a backend's settings): anything below is the owner's. */
    private record Anything() implements Shape {}

    private final Group root = new Group();

    private KnownKeys() {}

    static KnownKeys fromMetadata(ClassLoader loader, JsonMapper json) {
        KnownKeys keys = new KnownKeys();
        List<JsonNode> documents = new ArrayList<>();
        try {
            Enumeration<URL> urls = loader.getResources(METADATA);
            while (urls.hasMoreElements()) {
                try (InputStream in = urls.nextElement().openStream()) {
                    documents.add(json.readTree(in));
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + METADATA + ": " + e.getMessage(), e);
        }
        for (JsonNode doc : documents) {
            for (JsonNode group : doc.path("groups")) {
                String name = group.path("name").asString("");
                String type = group.path("type").asString("");
                // a root group: the record a @ConfigurationProperties prefix binds (nested groups are walked from it)
                if (isOurs(name) && type.equals(group.path("sourceType").asString(""))) {
                    try {
                        keys.add(name, shapeOf(Class.forName(type, false, loader)));
                    } catch (ClassNotFoundException e) {
                        // metadata of a class not on this class path: nothing binds it
                    }
                }
            }
        }
        for (JsonNode doc : documents) {
            for (JsonNode property : doc.path("properties")) {
                String name = property.path("name").asString("");
                if (isOurs(name) && !keys.knows(name)) {
                    keys.add(name, new Leaf()); // read directly from the environment (e.g. lazarus.server.event-loops)
                }
            }
        }
        return keys;
    }

    private static boolean isOurs(String name) {
        return name.equals(ROOT) || name.startsWith(ROOT + ".");
    }

    private boolean knows(String name) {
        return problem(ConfigurationPropertyName.of(name)).isEmpty();
    }

    private void add(String prefix, Shape shape) {
        String[] parts = prefix.split("\\.");
        if (parts.length == 1) {
            if (shape instanceof Group g) {
                g.names().forEach((uniform, kebab) -> root.put(kebab, g.children().get(uniform)));
            }
            return;
        }
        Group at = root;
        for (int i = 1; i < parts.length - 1; i++) {
            Group next = at.children().get(uniform(parts[i])) instanceof Group g ? g : null;
            if (next == null) {
                next = new Group();
                at.put(parts[i], next);
            }
            at = next;
        }
        at.put(parts[parts.length - 1], shape);
    }

    private static Shape merge(Shape a, Shape b) {
        if (a instanceof Group ga && b instanceof Group gb) {
            Group merged = new Group();
            ga.names().forEach((u, k) -> merged.put(k, ga.children().get(u)));
            gb.names().forEach((u, k) -> merged.put(k, gb.children().get(u)));
            return merged;
        }
        return a instanceof Leaf ? b : a;
    }

    private static Shape shapeOf(Type type) {
        if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> raw) {
            Type[] args = p.getActualTypeArguments();
            if (Map.class.isAssignableFrom(raw)) {
                return new Keyed(shapeOf(args[1]));
            }
            if (Collection.class.isAssignableFrom(raw)) {
                return new Listed(shapeOf(args[0]));
            }
            return shapeOf(raw);
        }
        if (!(type instanceof Class<?> c)) {
            return new Anything(); // a wildcard or type variable: cannot tell
        }
        if (c == Object.class) {
            return new Anything();
        }
        if (c.isArray()) {
            return new Listed(shapeOf(c.getComponentType()));
        }
        if (c.isRecord()) {
            Group group = new Group();
            for (RecordComponent component : c.getRecordComponents()) {
                group.put(kebab(component.getName()), shapeOf(component.getGenericType()));
            }
            return group;
        }
        if (Map.class.isAssignableFrom(c)) {
            return new Anything();
        }
        if (Collection.class.isAssignableFrom(c)) {
            return new Listed(new Anything());
        }
        return new Leaf();
    }

    /**
     * Empty when {@code name} (under {@code lazarus}) is a key the gateway reads; otherwise the one-line reason,
     * with the nearest known key when one is close.
     */
    Optional<String> problem(ConfigurationPropertyName name) {
        Shape at = root;
        StringBuilder path = new StringBuilder(ROOT);
        for (int i = 1; i < name.getNumberOfElements(); i++) {
            boolean indexed = name.isNumericIndex(i);
            String element = name.getElement(i, Form.UNIFORM);
            String original = name.getElement(i, Form.ORIGINAL);
            switch (at) {
                case Anything _ -> {
                    return Optional.empty();
                }
                case Keyed keyed -> {
                    path.append(indexed ? "[" + original + "]" : "." + original);
                    at = keyed.value();
                }
                case Listed listed -> {
                    if (!indexed) {
                        return Optional.of(path + " is a list: " + path + "." + original + " is not a key (use "
                                + path + "[0], " + path + "[1], ...)");
                    }
                    path.append('[').append(original).append(']');
                    at = listed.element();
                }
                case Leaf _ -> {
                    return Optional.of(path + " is a value, " + path + (indexed ? "[" + original + "]" : "." + original)
                            + " is not a key");
                }
                case Group group -> {
                    Shape child = indexed ? null : group.children().get(element);
                    if (child == null) {
                        String unknown = path + (indexed ? "[" + original + "]" : "." + original);
                        return Optional.of(unknown + " is not a configuration key" + nearest(group, element)
                                .map(n -> " (did you mean " + path + "." + n + "?)")
                                .orElse(" (" + path + " has: " + String.join(", ", group.names().values()) + ")"));
                    }
                    path.append('.').append(group.names().get(element));
                    at = child;
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<String> nearest(Group group, String element) {
        return group.names().entrySet().stream()
                .map(e -> Map.entry(e.getValue(), distance(e.getKey(), element)))
                .filter(e -> e.getValue() <= Math.max(2, element.length() / 3))
                .min(Comparator.comparingInt(Map.Entry::getValue))
                .map(Map.Entry::getKey);
    }

    /** Levenshtein distance, for the "did you mean" of a mistyped key. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    private static String uniform(String kebab) {
        return ConfigurationPropertyName.of(ROOT + "." + kebab).getElement(1, Form.UNIFORM);
    }
}
