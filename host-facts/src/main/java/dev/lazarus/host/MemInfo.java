package dev.lazarus.host;

import java.util.List;
import java.util.OptionalLong;

/**
 * A line of a {@code /proc/meminfo} in bytes, parsed in one place for the engine's RAM tier and the gateway's
 * preflight. The kernel writes {@code kB} and means KiB; a value without a unit is taken as bytes.
 */
public final class MemInfo {

    private MemInfo() {
    }

    /**
     * The value of {@code key} ({@code MemTotal}, {@code MemAvailable}, ...) in bytes; empty when no line names it.
     *
     * @throws NumberFormatException when the line names it with a value that is not a number
     */
    public static OptionalLong bytes(List<String> lines, String key) {
        String prefix = key + ":";
        for (String line : lines) {
            if (line.startsWith(prefix)) {
                String[] parts = line.substring(prefix.length()).trim().split("\\s+");
                long value = Long.parseLong(parts[0]);
                return OptionalLong.of(parts.length > 1 && parts[1].equalsIgnoreCase("kB") ? value * 1024 : value);
            }
        }
        return OptionalLong.empty();
    }
}
