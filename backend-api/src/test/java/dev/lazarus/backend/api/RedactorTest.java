package dev.lazarus.backend.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RedactorTest {

    private static final String KEY = "sk-upstream-SECRET789";
    private final Redactor redactor = Redactor.of(List.of(KEY, "gateway-key-0b5e7f", "admin-token-4c1d9a"));

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "invalid key sk-upstream-SECRET789 given | invalid key *** given",
            "got header Bearer sk-upstream-SECRET789) | got header Bearer ***)",
            "Authorization: Bearer abc.def-ghi | Authorization: ***",
            "authorization=Basic dXNlcjpwYXNz | authorization=***",
            "{\"Authorization\":\"Token t-55\"} | {\"Authorization\":\"***\"}",
            "X-Api-Key: k-9876 rejected | X-Api-Key: *** rejected",
            "{\"api_key\":\"k-9876\"} | {\"api_key\":\"***\"}",
            "url?key=abc123&x=1 | url?key=***&x=1",
            "token=abc123; path=/ | token=***; path=/",
            "password: hunter2 | password: ***",
            "an unknown sk-proj-abcdefgh123 key | an unknown *** key",
            "Loading model 'tiny.gguf' | Loading model 'tiny.gguf'",
            "tokenizer: 260 tokens, max_tokens=5, n_tokens: 7 | tokenizer: 260 tokens, max_tokens=5, n_tokens: 7",
            "monkey=3 turkey: 4 | monkey=3 turkey: 4",
            "unknown key: top_k | unknown key: top_k",
            "got key = abc123 | got key = ***"})
    void credentialShapesAreMaskedAndTheRestKept(String in, String out) {
        assertThat(redactor.redact(in)).isEqualTo(out);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            // a prefix cut by a truncation, at the end of the text or before an ellipsis
            "cut at 300: ...sk-upstream-SECRET78 | cut at 300: ...***",
            "cut: sk-upstream-SECRET78... | cut: ***...",
            "head sk-upstre | head ***",
            // a suffix: the text began mid-key
            "stream-SECRET789 was sent | *** was sent",
            // the known secrets of the gateway, wherever they stand
            "keys:gateway-key-0b5e7f,admin-token-4c1d9a | keys:***,***",
            "xxgateway-key-0b5e7fyy | xx***yy"})
    void knownSecretsAreMaskedWholeOrCut(String in, String out) {
        assertThat(redactor.redact(in)).isEqualTo(out);
    }

    @Test
    void aSecretThatBeginsWithAWordDoesNotMaskThatWordElsewhere() {
        Redactor r = Redactor.of(List.of("lazarus-admin-token-1"));
        assertThat(r.redact("model lazarus-tiny-moe")).isEqualTo("model lazarus-tiny-moe");
        assertThat(r.redact("short piece lazarus is kept")).isEqualTo("short piece lazarus is kept");
    }

    @Test
    void quoteRedactsBeforeItCuts() {
        String body = "x".repeat(279) + " " + KEY + " tail";
        String quoted = redactor.quote(body, 300);
        assertThat(quoted).doesNotContain("SECRET").doesNotContain("sk-upstream").contains("***");
        assertThat(quoted.length()).isLessThanOrEqualTo(303);
        // with no known secret the shape is caught before the cut as well
        assertThat(Redactor.shapesOnly().quote("x".repeat(290) + " Bearer abcdefghijkl", 300))
                .doesNotContain("abcdefgh");
        assertThat(redactor.quote("  ", 300)).isEqualTo("(empty body)");
    }

    @Test
    void valuesInsideMapsAndListsAreRedacted() {
        Map<String, Object> in = Map.of("detail", "Bearer " + KEY, "n", 3,
                "nested", Map.of("list", List.of("key=" + KEY)));
        assertThat(redactor.redactValues(in).toString()).doesNotContain("SECRET").contains("n=3");
    }

    @Test
    void failuresAreCopiedWithRedactedMessagesAndTheirStacks() {
        IllegalStateException cause = new IllegalStateException("unexpected token at 'Authorization: Bearer " + KEY + "'");
        RuntimeException top = new RuntimeException("wrapped " + KEY, cause);
        Throwable copy = redactor.redact(top);
        assertThat(copy.getMessage()).startsWith("java.lang.RuntimeException: wrapped ***");
        assertThat(copy.getCause().getMessage()).doesNotContain("SECRET").startsWith("java.lang.IllegalStateException");
        assertThat(copy.getStackTrace()).isEqualTo(top.getStackTrace());
    }

    @Test
    void tooShortSecretsAreNotLookedForAndRevealsTellsWhetherAnythingWasMasked() {
        Redactor r = Redactor.of(List.of("abc", " "));
        assertThat(r.knownSecrets()).isZero();
        assertThat(r.redact("abc")).isEqualTo("abc");
        assertThat(redactor.reveals("the key " + KEY)).isTrue();
        assertThat(redactor.reveals("nothing here")).isFalse();
    }

    @Test
    void aBackendConfigKnowsItsOwnCredentialsButNotItsOrdinarySettings() {
        BackendConfig config = new BackendConfig("b", "llamacpp",
                Map.of("api-key", "own-upstream-key-1", "max-tokens", "256", "url", "http://h:1"));
        assertThat(BackendConfig.secretValues(config.settings())).containsExactly("own-upstream-key-1");
        assertThat(config.redactor().redact("echo own-upstream-key-1 256")).isEqualTo("echo *** 256");
        BackendConfig shared = new BackendConfig("b", "llamacpp", Map.of("api-key", "own-upstream-key-1"), redactor);
        assertThat(shared.redactor().redact(KEY + " own-upstream-key-1")).isEqualTo("*** ***");
    }

    /**
     * Issue 35: a key split across two texts redacted apart (two reads of an upstream's body, two log lines): at every
     * split, each side's piece of the key is masked once it is {@value Redactor#MIN_FRAGMENT} characters or longer, so
     * what either side shows is a piece shorter than that, never enough to rebuild the key.
     */
    @Test
    void aKeySplitAcrossTwoTextsShowsNoPieceOfMinFragmentOrMoreOnEitherSide() {
        String key = "sk-lazarus-gw-9f3b2c7d1e5a4b6c";
        Redactor r = Redactor.of(List.of(key));
        for (int at = 1; at < key.length(); at++) {
            String head = r.redact("data: {\"error\":{\"message\":\"Incorrect API key provided: " + key.substring(0, at));
            String tail = r.redact(key.substring(at) + "\"}}\n\n");
            String shownHead = head.endsWith(Redactor.MASK) ? "" : key.substring(0, at);
            String shownTail = tail.startsWith(Redactor.MASK) ? "" : key.substring(at);
            assertThat(shownHead.length()).as("split at %d: %s", at, head).isLessThan(Redactor.MIN_FRAGMENT);
            assertThat(shownTail.length()).as("split at %d: %s", at, tail).isLessThan(Redactor.MIN_FRAGMENT);
            assertThat(head + tail).doesNotContain(key);
        }
    }

    /** Issue 35: a known key base64- or URL-encoded, at any alignment, and other vendors' key shapes. */
    @org.junit.jupiter.api.Test
    void encodedFormsOfAKeyAndOtherVendorsShapesAreMasked() {
        Redactor special = Redactor.of(List.of(KEY, "p@ss/w0rd+k3y=long"));
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder();
        for (String before : List.of("", "a", "ab", "abc")) {
            String blob = b64.encodeToString((before + KEY + "tail").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            String out = special.redact("config=" + blob);
            org.assertj.core.api.Assertions.assertThat(out).as(before).contains(Redactor.MASK);
            String urlSafe = java.util.Base64.getUrlEncoder().encodeToString(
                    (before + KEY).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            org.assertj.core.api.Assertions.assertThat(special.redact("v " + urlSafe)).contains(Redactor.MASK);
        }
        String url = java.net.URLEncoder.encode("p@ss/w0rd+k3y=long", java.nio.charset.StandardCharsets.UTF_8);
        org.assertj.core.api.Assertions.assertThat(special.redact("GET /x?pw=" + url + "&y=1")).doesNotContain(url)
                .doesNotContain("w0rd");
        for (String shape : List.of("AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "glpat-abcdefghij0123456789",
                "xoxb-1234567890-abcdefghij", "hf_abcdefghijklmnopqrstuvwxyz0123456789",
                "AIzaSyA-1234567890abcdefghijklmnopqrstu",
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")) {
            org.assertj.core.api.Assertions.assertThat(Redactor.shapesOnly().redact("upstream said: " + shape + " is bad"))
                    .as(shape).isEqualTo("upstream said: *** is bad");
        }
    }
}
