package dev.lazarus.host;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a {@code /proc/cpuinfo} says, parsed in one place for the engine's kernel choice ({@code HostCpu}) and the
 * gateway's preflight: the first processor's vendor, model name and feature flags (x86 writes {@code flags}, Arm
 * {@code Features}), and how many processors it lists.
 *
 * @param vendor     {@code vendor_id}, Arm's {@code CPU implementer} as "arm (implementer 0x41)", else "unknown"
 * @param model      {@code model name}, else "unknown"
 * @param flags      lower case; empty where the file lists none
 * @param processors {@code processor} entries
 */
public record CpuInfo(String vendor, String model, Set<String> flags, int processors) {

    public CpuInfo {
        flags = Set.copyOf(flags);
    }

    /** Parses the lines of a {@code /proc/cpuinfo}; an empty list gives an unknown CPU without flags. */
    public static CpuInfo parse(List<String> lines) {
        String vendor = null;
        String model = null;
        String implementer = null;
        Set<String> flags = new TreeSet<>();
        boolean flagsSeen = false;
        int processors = 0;
        for (String line : lines) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String key = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            switch (key) {
                case "processor" -> processors++;
                case "vendor_id" -> vendor = vendor == null ? value : vendor;
                case "model name" -> model = model == null ? value : model;
                case "cpu implementer" -> implementer = implementer == null ? value : implementer;
                // the first processor's list stands for all
                case "flags", "features" -> {
                    if (!flagsSeen) {
                        flagsSeen = true;
                        for (String flag : value.split("\\s+")) {
                            if (!flag.isEmpty()) {
                                flags.add(flag.toLowerCase(Locale.ROOT));
                            }
                        }
                    }
                }
                default -> { }
            }
        }
        if (vendor == null && implementer != null) {
            vendor = "arm (implementer " + implementer + ")";
        }
        return new CpuInfo(vendor == null ? "unknown" : vendor, model == null ? "unknown" : model, flags, processors);
    }
}
