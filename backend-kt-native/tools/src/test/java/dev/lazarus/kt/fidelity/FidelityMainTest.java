package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.fidelity.FidelityLlamaServerTest.Run;
import dev.lazarus.kt.synthetic.SyntheticModels;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The command's mistakes: one clear line on stderr and exit 2; a measurement that cannot run: exit 3. */
class FidelityMainTest {

    @TempDir
    static Path dir;
    static String model;

    @BeforeAll
    static void model() {
        model = SyntheticModels.write(SyntheticModels.tinyLlama(), dir.resolve("llama.gguf")).toString();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "''                                             | --model is required",
            "--model MODEL                                  | --oracle is required",
            "--model /nonexistent.gguf --oracle http://h:1  | --model /nonexistent.gguf: no such readable file",
            "--model MODEL --oracle ftp://h:1               | --oracle ftp://h:1: not an http(s) URL such as http://127.0.0.1:8080",
            "--model MODEL --oracle http://h:1 --tokens 0   | --tokens 0: not a whole number ≥ 1",
            "--model MODEL --oracle http://h:1 --tokens x   | --tokens x: not a whole number ≥ 1",
            "--model MODEL --oracle http://h:1 --min-top1 2 | --min-top1 2: not a number within [0.0, 1.0]",
            "--model MODEL --oracle http://h:1 --max-delta -1 | --max-delta -1: not a number within [0.0, ∞]",
            "--model --oracle http://h:1                    | --model needs a value",
            "--model MODEL --oracle http://h:1 --frobnicate | unknown argument --frobnicate",
            "--model MODEL --oracle http://h:1 --oracle-ctk q9 | --oracle-ctk q9: one of f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1",
            "--model MODEL --oracle http://h:1 --oracle-ctv | --oracle-ctv needs a value",
    })
    void aBadArgumentIsOneLineAndExit2(String args, String message) {
        Run run = Run.of(args.isBlank() ? new String[0] : args.replace("MODEL", model).split(" +"));

        assertThat(run.code()).isEqualTo(FidelityMain.BAD_ARGUMENTS);
        assertThat(run.err()).isEqualTo("fidelity: " + message + " (--help for usage)" + System.lineSeparator());
        assertThat(run.out()).isEmpty();
    }

    @Test
    void helpPrintsTheUsage() {
        Run run = Run.of("--help");
        assertThat(run.code()).isZero();
        assertThat(run.out()).startsWith("usage: fidelity.sh --model X.gguf --oracle").contains("--min-top1");
    }

    @Test
    void anUnreadablePromptsFileIsABadArgument() throws IOException {
        Path prompts = Files.writeString(dir.resolve("prompts.txt"), "[1, 2\n");
        Run run = Run.of("--model", model, "--oracle", "http://127.0.0.1:9", "--prompts", prompts.toString());

        assertThat(run.code()).isEqualTo(FidelityMain.BAD_ARGUMENTS);
        assertThat(run.err()).isEqualTo("fidelity: --prompts " + prompts + ": line-1: not valid JSON: [1, 2"
                + System.lineSeparator());
    }

    @Test
    void anOracleThatDoesNotAnswerFailsTheMeasurement() {
        Run run = Run.of("--model", model, "--oracle", "http://127.0.0.1:9", "--threads", "1");

        assertThat(run.code()).isEqualTo(FidelityMain.FAILED);
        assertThat(run.err()).startsWith("fidelity: measurement failed: GET http://127.0.0.1:9/health failed")
                .contains("is llama-server running there?");
    }
}
