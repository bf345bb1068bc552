package dev.lazarus.kt.synthetic;

import dev.lazarus.kt.gguf.GgmlType;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Command line: {@code SyntheticModelsMain <preset> <out.gguf> [F32|F16|BF16|Q8_0|Q4_K]}, for scripts and
 * benchmarks ({@code Q4_K_M} is made from an F32/F16 file with llama.cpp's {@code llama-quantize}).
 */
public final class SyntheticModelsMain {

    private SyntheticModelsMain() {
    }

    public static void main(String[] args) {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: SyntheticModelsMain <preset> <out.gguf> [F32|F16|BF16|Q8_0]");
            System.err.println("presets: tinyLlama tinyLlamaMoe tinyQwen3 tinyQwen3Moe tinyDeepseek2 benchQwen3Moe benchQwen3MoeSkewed benchQwen3MoeFlat");
            System.exit(2);
        }
        SyntheticModels.Spec spec = SyntheticModels.preset(args[0]);
        if (args.length == 3) {
            spec = spec.withWeightType(GgmlType.valueOf(args[2].toUpperCase(Locale.ROOT)));
        }
        Path out = SyntheticModels.write(spec, Path.of(args[1]));
        System.out.printf("%s: %s, %s, %,d weights%n", out, spec.name(), spec.weightType(), spec.parameterCount());
    }
}
