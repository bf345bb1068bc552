package dev.lazarus.llamacpp.process;

import java.util.ArrayList;
import java.util.List;

/** The command line that starts llama-server, built from the supervision settings. */
public final class LlamaServerCommand {

    private LlamaServerCommand() {}

    /**
     * {@code prefix... binary [-m model] [--alias name] --host h --port p [-c n] [-t n] [-ngl n]
     * [--n-cpu-moe n] extra...}. The api key is not on it: it goes through the environment
     * ({@link #API_KEY_ENV}) so that it shows neither in {@code ps} nor in the log.
     */
    public static List<String> build(Supervision s, String modelName) {
        List<String> cmd = new ArrayList<>(s.commandPrefix());
        cmd.add(s.binary());
        if (s.model() != null) {
            cmd.addAll(List.of("-m", s.model()));
        }
        if (modelName != null) {
            // /v1/models then reports the configured name instead of the file name.
            cmd.addAll(List.of("--alias", modelName));
        }
        cmd.addAll(List.of("--host", s.host(), "--port", Integer.toString(s.port())));
        if (s.ctxSize() > 0) {
            cmd.addAll(List.of("-c", Integer.toString(s.ctxSize())));
        }
        if (s.threads() > 0) {
            cmd.addAll(List.of("-t", Integer.toString(s.threads())));
        }
        if (s.gpuLayers() >= 0) {
            cmd.addAll(List.of("-ngl", Integer.toString(s.gpuLayers())));
        }
        if (s.nCpuMoe() >= 0) {
            cmd.addAll(List.of("--n-cpu-moe", Integer.toString(s.nCpuMoe())));
        }
        cmd.addAll(s.extraArgs());
        return List.copyOf(cmd);
    }

    /**
     * The command as the log shows it: an {@code --api-key} an operator put among the extra
     * arguments anyway (instead of the {@code api-key} setting) is masked.
     */
    public static String forLog(List<String> command) {
        List<String> shown = new ArrayList<>(command.size());
        boolean secretNext = false;
        for (String arg : command) {
            shown.add(secretNext ? "***" : arg.startsWith("--api-key=") ? "--api-key=***" : arg);
            secretNext = arg.equals("--api-key");
        }
        return String.join(" ", shown);
    }

    /** llama-server reads {@code --api-key} from this variable when the flag is absent. */
    public static final String API_KEY_ENV = "LLAMA_API_KEY";
}
