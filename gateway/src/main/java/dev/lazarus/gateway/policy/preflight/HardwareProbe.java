package dev.lazarus.gateway.policy.preflight;

import dev.lazarus.host.CpuInfo;
import dev.lazarus.host.MemInfo;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Reads what the machine has from Linux's own files (/proc/cpuinfo, /proc/meminfo,
 * /sys/devices/system/node) and from {@code nvidia-smi} when it is installed. Every source is a
 * path or a command in {@link Sources}, so tests read fixture files. A source that cannot be read
 * becomes a note in the profile, never an exception: the preflight then says what it did not know.
 */
public final class HardwareProbe {

    private static final Pattern NODE_DIR = Pattern.compile("node\\d+");

    /**
     * @param cpuinfo          /proc/cpuinfo
     * @param meminfo          /proc/meminfo
     * @param nodes            /sys/devices/system/node
     * @param nvidiaSmi        the nvidia-smi executable (a name on PATH or a path); blank to skip GPUs
     * @param nvidiaSmiTimeout how long nvidia-smi may take before it is killed
     */
    public record Sources(Path cpuinfo, Path meminfo, Path nodes, String nvidiaSmi, Duration nvidiaSmiTimeout) {

        public static Sources linux() {
            return new Sources(Path.of("/proc/cpuinfo"), Path.of("/proc/meminfo"), Path.of("/sys/devices/system/node"),
                    "nvidia-smi", Duration.ofSeconds(5));
        }
    }

    private final Sources sources;
    private volatile HardwareProfile cached;

    public HardwareProbe(Sources sources) {
        this.sources = sources;
    }

    /** The machine's profile, probed once: CPUs and memory do not change while the gateway runs. */
    public HardwareProfile profile() {
        HardwareProfile known = cached;
        if (known == null) {
            known = probe();
            cached = known;
        }
        return known;
    }

    /** Reads every source now. */
    public HardwareProfile probe() {
        List<String> notes = new ArrayList<>();
        CpuInfo cpu = readCpu(notes);
        return new HardwareProfile(cpu.vendor(), cpu.model(), cpu.flags(), cpu.processors(), countNumaNodes(notes),
                readRam(notes), readGpus(notes), notes);
    }

    private CpuInfo readCpu(List<String> notes) {
        List<String> lines = lines(sources.cpuinfo(), notes);
        CpuInfo cpu = CpuInfo.parse(lines);
        if (!lines.isEmpty() && cpu.flags().isEmpty()) {
            notes.add(sources.cpuinfo() + " lists no CPU flags");
        }
        return cpu;
    }

    private long readRam(List<String> notes) {
        List<String> lines = lines(sources.meminfo(), notes);
        try {
            OptionalLong total = MemInfo.bytes(lines, "MemTotal");
            if (total.isEmpty() && !lines.isEmpty()) {
                notes.add("no MemTotal in " + sources.meminfo());
            }
            return total.orElse(0);
        } catch (NumberFormatException e) {
            notes.add("unreadable MemTotal line in " + sources.meminfo() + ": " + e.getMessage());
            return 0;
        }
    }

    private int countNumaNodes(List<String> notes) {
        if (!Files.isDirectory(sources.nodes())) {
            notes.add(sources.nodes() + " not present: assuming one NUMA node");
            return 1;
        }
        int count = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(sources.nodes())) {
            for (Path entry : entries) {
                if (NODE_DIR.matcher(entry.getFileName().toString()).matches()) {
                    count++;
                }
            }
        } catch (IOException e) {
            notes.add("cannot list " + sources.nodes() + ": " + e.getMessage());
        }
        return Math.max(count, 1);
    }

    private List<HardwareProfile.Gpu> readGpus(List<String> notes) {
        String command = sources.nvidiaSmi();
        if (command == null || command.isBlank()) {
            return List.of();
        }
        Process process;
        try {
            process = new ProcessBuilder(command, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits")
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            notes.add("no GPUs: " + command + " not runnable");
            return List.of();
        }
        try (InputStream out = process.getInputStream()) {
            // Read in the background so that a hung nvidia-smi cannot outlast the timeout.
            CompletableFuture<String> text = CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(out.readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    return "";
                }
            });
            if (!process.waitFor(sources.nvidiaSmiTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                notes.add("no GPUs: " + command + " did not answer within " + sources.nvidiaSmiTimeout());
                return List.of();
            }
            if (process.exitValue() != 0) {
                notes.add("no GPUs: " + command + " exited with " + process.exitValue());
                return List.of();
            }
            return parseGpus(text.get(sources.nvidiaSmiTimeout().toMillis(), TimeUnit.MILLISECONDS), notes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            return List.of();
        } catch (IOException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            process.destroyForcibly();
            notes.add("no GPUs: reading " + command + " failed: " + e.getMessage());
            return List.of();
        }
    }

    /** Lines of {@code name, memory MiB}. */
    static List<HardwareProfile.Gpu> parseGpus(String csv, List<String> notes) {
        List<HardwareProfile.Gpu> gpus = new ArrayList<>();
        for (String line : csv.split("\\R")) {
            if (line.isBlank()) {
                continue;
            }
            int comma = line.lastIndexOf(',');
            try {
                long mib = Long.parseLong(line.substring(comma + 1).trim());
                gpus.add(new HardwareProfile.Gpu(line.substring(0, comma).trim(), mib * 1024 * 1024));
            } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
                notes.add("unreadable nvidia-smi line: " + line);
            }
        }
        return gpus;
    }

    private static List<String> lines(Path path, List<String> notes) {
        try {
            return Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            notes.add("cannot read " + path + ": " + e.getMessage());
            return List.of();
        }
    }
}
