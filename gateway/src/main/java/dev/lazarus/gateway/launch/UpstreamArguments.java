package dev.lazarus.gateway.launch;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code java -jar lazarus.jar --upstream URL --model NAME}: one OpenAI-compatible server behind the gateway
 * without any YAML. The two options become the configuration they stand for (a backend {@code upstream} of kind
 * {@code openai} at URL, the public model NAME routed to it), which replaces the bundled model's; every other
 * argument passes through unchanged. Both {@code --upstream URL} and {@code --upstream=URL} forms are accepted.
 */
public final class UpstreamArguments {

    static final String UPSTREAM = "--upstream";
    static final String MODEL = "--model";
    static final String API_KEY = "--upstream-api-key";

    private UpstreamArguments() {}

    /** The arguments Spring Boot gets; throws {@link IllegalArgumentException} with the one-line reason. */
    public static String[] expand(String[] args) {
        String upstream = null;
        String model = null;
        String apiKey = null;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String option = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            if (!option.equals(UPSTREAM) && !option.equals(MODEL) && !option.equals(API_KEY)) {
                rest.add(arg);
                continue;
            }
            String value;
            if (arg.contains("=")) {
                value = arg.substring(arg.indexOf('=') + 1);
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException(option + " needs a value");
            }
            switch (option) {
                case UPSTREAM -> upstream = value;
                case MODEL -> model = value;
                default -> apiKey = value;
            }
        }
        if (upstream == null && model == null && apiKey == null) {
            return args;
        }
        if (upstream == null || model == null || upstream.isBlank() || model.isBlank()) {
            throw new IllegalArgumentException("--upstream URL and --model NAME go together: the server to front"
                    + " and the model name clients send (e.g. --upstream http://127.0.0.1:8080 --model qwen3)");
        }
        List<String> expanded = new ArrayList<>(List.of(
                "--lazarus.backends[0].id=upstream",
                "--lazarus.backends[0].kind=openai",
                "--lazarus.backends[0].settings.url=" + upstream,
                "--lazarus.models[0].name=" + model,
                "--lazarus.models[0].backends[0]=upstream"));
        if (apiKey != null) {
            expanded.add("--lazarus.backends[0].settings.api-key=" + apiKey);
        }
        expanded.addAll(rest);
        return expanded.toArray(String[]::new);
    }
}
