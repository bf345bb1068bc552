package dev.lazarus.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lazarus.gateway.LazarusGatewayApplication;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Configuration mistakes that used to start a different gateway than the one configured (or die in a page of stack
 * trace) stop the start with one line: the application is started as {@code java -jar} starts it, with a YAML file
 * and command-line arguments, and its output is read.
 */
@ExtendWith(OutputCaptureExtension.class)
class FailFastConfigTest {

    @TempDir
    Path dir;

    @Test
    void aMisspeltSecuritySectionRefusesToStartInsteadOfRunningWithoutAuthentication(CapturedOutput output)
            throws IOException {
        String description = failedStart(output, """
                lazarus:
                  securty:
                    api-keys: [k1]
                """);
        assertThat(description).isEqualTo("lazarus.securty is not a configuration key (did you mean lazarus.security?)"
                + " (URL [file:" + dir.resolve("lazarus.yml") + "] - 3:16)");
    }

    @Test
    void misspeltBackendAndModelSectionsRefuseToStartInsteadOfServingTheBundledModel(CapturedOutput output)
            throws IOException {
        String description = failedStart(output, """
                lazarus:
                  backend:
                    - id: llama
                      kind: llamacpp
                  model:
                    - name: big
                      backends: [llama]
                """);
        assertThat(description).contains("lazarus.backend is not a configuration key (did you mean lazarus.backends?)")
                .contains("lazarus.model is not a configuration key (did you mean lazarus.models?)");
    }

    @Test
    void aMisspeltNestedKeyNamesTheNearestOne(CapturedOutput output) throws IOException {
        String description = failedStart(output, """
                lazarus:
                  policy:
                    gate:
                      max-ttf: 2s
                """);
        assertThat(description).startsWith("lazarus.policy.gate.max-ttf is not a configuration key"
                + " (did you mean lazarus.policy.gate.max-ttft?)");
    }

    @Test
    void anUnsetVariableInAnApiKeyRefusesToStartRatherThanBecomingAValidKey(CapturedOutput output) throws IOException {
        String description = failedStart(output, """
                lazarus:
                  security:
                    api-keys: ["${LAZARUS_TEST_NEVER_SET_KEY}"]
                """);
        assertThat(description).startsWith("lazarus.security.api-keys[0] is ${LAZARUS_TEST_NEVER_SET_KEY}, but"
                + " LAZARUS_TEST_NEVER_SET_KEY is not set");
    }

    @Test
    void anUnsetAdminTokenVariableIsOneLineNotAStackTrace(CapturedOutput output) throws IOException {
        String description = failedStart(output, "", "--lazarus.admin.token=${LAZARUS_TEST_NEVER_SET_TOKEN}");
        assertThat(description).startsWith("lazarus.admin.token is ${LAZARUS_TEST_NEVER_SET_TOKEN}, but"
                + " LAZARUS_TEST_NEVER_SET_TOKEN is not set");
    }

    @Test
    void anUnsetVariableInABackendsCredentialRefusesToStart(CapturedOutput output) throws IOException {
        String description = failedStart(output, """
                lazarus:
                  backends:
                    - id: hosted
                      kind: openai
                      settings:
                        api-key: ${LAZARUS_TEST_NEVER_SET_UPSTREAM}
                """);
        assertThat(description).startsWith("lazarus.backends[0].settings.api-key is ${LAZARUS_TEST_NEVER_SET_UPSTREAM}");
    }

    @Test
    void aDefaultedVariableAndBackendSettingsOfAnyNameAreAccepted() {
        KnownKeys known = KnownKeys.fromMetadata(getClass().getClassLoader(), tools.jackson.databind.json.JsonMapper.builder().build());
        for (String key : new String[] {"lazarus.backends[0].settings.anything-a-backend-reads",
                "lazarus.policy.backends.alpha.role", "lazarus.resilience.attempt.backends.hosted.retries",
                "lazarus.server.event-loops", "lazarus.security.api-keys[3]", "lazarus.models[0].backends[1]",
                "lazarus.policy.gate.request-extra.seed"}) {
            assertThat(known.problem(org.springframework.boot.context.properties.source.ConfigurationPropertyName
                    .of(key))).as(key).isEmpty();
        }
    }

    /** Starts the gateway as a user would, expects it to stop, and returns the failure report's description. */
    private String failedStart(CapturedOutput output, String yaml, String... more) throws IOException {
        Path file = Files.writeString(dir.resolve("lazarus.yml"), yaml);
        String[] args = new String[more.length + 2];
        args[0] = "--spring.config.additional-location=file:" + file;
        args[1] = "--spring.main.web-application-type=none";
        System.arraycopy(more, 0, args, 2, more.length);
        assertThatThrownBy(() -> SpringApplication.run(LazarusGatewayApplication.class, args))
                .isInstanceOf(GatewayConfigException.class);
        String out = output.getAll();
        assertThat(out).contains("APPLICATION FAILED TO START").doesNotContain("\tat ");
        String afterHeading = out.substring(out.indexOf("Description:") + "Description:".length()).strip();
        return afterHeading.lines().findFirst().orElseThrow();
    }
}
