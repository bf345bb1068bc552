package dev.lazarus.gateway.config;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.Set;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import tools.jackson.databind.json.JsonMapper;

/**
 * Refuses to start, in one line, on the configuration mistakes that would otherwise run a different gateway than the
 * one configured: a {@code lazarus.*} key nothing reads (a misspelt {@code securty:} would run without
 * authentication, a {@code backend:} would serve the bundled model), and a secret whose {@code ${VARIABLE}} is not
 * set (the literal text would become a valid API key). Runs after the configuration files are read, before any bean
 * exists. The configuration files, command-line arguments and test properties are checked; environment variables and
 * system properties are not (the environment holds unrelated {@code LAZARUS_*} variables, such as a test's).
 */
public final class ConfigKeysCheck implements EnvironmentPostProcessor, Ordered {

    /** Keys whose values are credentials: an unresolved placeholder there must not become a working secret. */
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}:]+)");
    private static final List<String> SECRET_WORDS = List.of("token", "key", "password", "secret", "credential");

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        check(environment, KnownKeys.fromMetadata(classLoader(application), JsonMapper.builder().build()));
    }

    private static ClassLoader classLoader(SpringApplication application) {
        ClassLoader loader = application != null ? application.getClassLoader() : null;
        return loader != null ? loader : ConfigKeysCheck.class.getClassLoader();
    }

    static void check(ConfigurableEnvironment environment, KnownKeys known) {
        Set<String> problems = new LinkedHashSet<>();
        ConfigurationPropertyName root = ConfigurationPropertyName.of(KnownKeys.ROOT);
        for (PropertySource<?> source : environment.getPropertySources()) {
            if (!checked(source)) {
                continue;
            }
            if (!(ConfigurationPropertySource.from(source) instanceof IterableConfigurationPropertySource names)) {
                continue;
            }
            names.stream().filter(root::isAncestorOf).forEach(name -> {
                known.problem(name).ifPresent(p -> problems.add(p + origin(names.getConfigurationProperty(name))));
                unresolvedSecret(environment, name, names.getConfigurationProperty(name)).ifPresent(problems::add);
            });
        }
        if (!problems.isEmpty()) {
            List<String> first = new ArrayList<>(problems).subList(0, Math.min(5, problems.size()));
            throw new GatewayConfigException(String.join("; ", first)
                    + (problems.size() > first.size() ? "; and " + (problems.size() - first.size()) + " more" : ""));
        }
    }

    private static boolean checked(PropertySource<?> source) {
        String name = source.getName();
        return !name.equals(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME)
                && !name.equals(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME)
                && !name.equals("configurationProperties"); // ConfigurationPropertySources' view of all the others
    }

    private static Optional<String> unresolvedSecret(ConfigurableEnvironment environment,
            ConfigurationPropertyName name, ConfigurationProperty property) {
        if (property == null || !(property.getValue() instanceof String raw) || !raw.contains("${") || !secret(name)) {
            return Optional.empty();
        }
        String resolved = environment.resolvePlaceholders(raw);
        if (!resolved.contains("${")) {
            return Optional.empty();
        }
        Matcher variable = PLACEHOLDER.matcher(resolved);
        String missing = variable.find() ? variable.group(1) : resolved;
        return Optional.of(name + " is " + raw + ", but " + missing + " is not set" + origin(property)
                + ": set it, or give an empty default (${" + missing + ":}) to leave this off");
    }

    /** Everything under lazarus.security and lazarus.admin, and any key named like a credential. */
    private static boolean secret(ConfigurationPropertyName name) {
        String second = name.getNumberOfElements() > 1 ? name.getElement(1, Form.UNIFORM) : "";
        if (second.equals("security") || second.equals("admin")) {
            return true;
        }
        for (int i = 1; i < name.getNumberOfElements(); i++) {
            String element = name.getElement(i, Form.UNIFORM).toLowerCase(Locale.ROOT);
            if (SECRET_WORDS.stream().anyMatch(element::contains)) {
                return true;
            }
        }
        return false;
    }

    private static String origin(ConfigurationProperty property) {
        return property != null && property.getOrigin() != null ? " (" + property.getOrigin() + ")" : "";
    }

    @Override
    public int getOrder() {
        // After the configuration files are read (ConfigDataEnvironmentPostProcessor).
        return Ordered.LOWEST_PRECEDENCE;
    }
}
