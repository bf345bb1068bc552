package dev.lazarus.llamacpp.process;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The attention settings of a llama-server this backend starts, read from its command line: {@code /props} does not
 * report them (b11669 reports the per-slot context, the slots and the build). They decide the arithmetic a
 * comparison with another engine meets (the decision gate's agreement probe compares them first).
 *
 * <p>Facts, as they appear in the backend's model metadata: {@code flash_attention} ({@code on} or {@code off};
 * {@code -fa auto}, llama-server's default, counts as {@code on}: what it picks on CPU and CUDA), {@code cache_type_k}
 * and {@code cache_type_v} ({@code f16} unless {@code -ctk}/{@code -ctv} say otherwise), {@code threads} when given.
 */
public final class AttentionFlags {

    private AttentionFlags() {}

    /** The facts of {@code command} (the last occurrence of a flag wins, as in llama-server's parser). */
    public static Map<String, Object> of(List<String> command) {
        String fa = "on", k = "f16", v = "f16";
        Integer threads = null;
        for (int i = 0; i < command.size(); i++) {
            String arg = command.get(i);
            String value = i + 1 < command.size() ? command.get(i + 1) : null;
            switch (arg) {
                case "-fa", "--flash-attn" -> fa = value == null || value.startsWith("-") ? "on" : onOrOff(value);
                case "-ctk", "--cache-type-k" -> k = value == null ? k : value.toLowerCase(Locale.ROOT);
                case "-ctv", "--cache-type-v" -> v = value == null ? v : value.toLowerCase(Locale.ROOT);
                case "-t", "--threads" -> threads = integer(value);
                default -> {
                    // other flags change no attention arithmetic
                }
            }
        }
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("flash_attention", fa);
        facts.put("cache_type_k", k);
        facts.put("cache_type_v", v);
        if (threads != null && threads > 0) {
            facts.put("threads", threads);
        }
        return facts;
    }

    private static String onOrOff(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "off", "0", "false", "disabled" -> "off";
            default -> "on"; // on, auto (enabled on CPU and CUDA), 1, true
        };
    }

    private static Integer integer(String value) {
        try {
            return value == null ? null : Integer.valueOf(value);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
