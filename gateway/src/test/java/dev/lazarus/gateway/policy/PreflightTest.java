package dev.lazarus.gateway.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.gateway.policy.preflight.HardwareProbe;
import dev.lazarus.gateway.policy.preflight.HardwareProfile;
import dev.lazarus.gateway.policy.preflight.Preflight;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hardware probe on fixture /proc and /sys files, and the preflight verdicts on them. */
class PreflightTest {

    private static final long GIB = 1024L * 1024 * 1024;
    private static final long HEADROOM = 4 * GIB;

    @TempDir
    Path dir;

    @Test
    void probesAnAmdEpycWithoutAvx512OrAmxOnTwoNumaNodes() throws Exception {
        HardwareProfile hw = probe("cpuinfo-amd-epyc-7763.txt", "meminfo-384g.txt", 2, null);

        assertThat(hw.cpuVendor()).isEqualTo("AuthenticAMD");
        assertThat(hw.cpuModel()).isEqualTo("AMD EPYC 7763 64-Core Processor");
        assertThat(hw.policyFlags()).containsExactly("avx2");
        assertThat(hw.logicalCpus()).isEqualTo(8);
        assertThat(hw.numaNodes()).isEqualTo(2);
        assertThat(hw.ramBytes()).isEqualTo(384 * GIB);
        assertThat(hw.gpus()).isEmpty();
        assertThat(hw.notes()).anySatisfy(note -> assertThat(note).contains("no GPUs"));
    }

    @Test
    void probesASapphireRapidsXeonWithAmxAndTwoGpusFromNvidiaSmi() throws Exception {
        HardwareProfile hw = probe("cpuinfo-intel-xeon-8480.txt", "meminfo-1t.txt", 1, fakeNvidiaSmi());

        assertThat(hw.cpuVendor()).isEqualTo("GenuineIntel");
        assertThat(hw.cpuModel()).isEqualTo("Intel(R) Xeon(R) Platinum 8480+");
        assertThat(hw.policyFlags()).containsExactly("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile",
                "amx_int8", "amx_bf16");
        assertThat(hw.ramBytes()).isEqualTo(1056561152L * 1024);
        assertThat(hw.gpus()).containsExactly(
                new HardwareProfile.Gpu("NVIDIA GeForce RTX 4090", 24564L * 1024 * 1024),
                new HardwareProfile.Gpu("NVIDIA RTX A6000", 49140L * 1024 * 1024));
        assertThat(hw.vramBytes()).isEqualTo((24564L + 49140L) * 1024 * 1024);
    }

    @Test
    void missingSourcesBecomeNotesNotFailures() {
        HardwareProfile hw = new HardwareProbe(new HardwareProbe.Sources(dir.resolve("nope"), dir.resolve("nope2"),
                dir.resolve("no-nodes"), "", Duration.ofSeconds(1))).probe();

        assertThat(hw.flags()).isEmpty();
        assertThat(hw.ramBytes()).isZero();
        assertThat(hw.numaNodes()).isEqualTo(1);
        assertThat(hw.notes()).hasSize(3);
        Preflight.Requirement needsAvx2 = new Preflight.Requirement(KtMethod.LLAMAFILE, OptionalLong.empty());
        assertThat(Preflight.evaluate(hw, needsAvx2, HEADROOM).reason()).contains("lacks avx2")
                .contains("could not be read");
    }

    @Test
    void amdWithoutAmxFailsAmxAndAvx512MethodsNamingTheMissingFlags() throws Exception {
        HardwareProfile epyc = probe("cpuinfo-amd-epyc-7763.txt", "meminfo-384g.txt", 2, null);

        PreflightCheck.Outcome amx = Preflight.evaluate(epyc, need(KtMethod.AMXINT8), HEADROOM);
        assertThat(amx.passed()).isFalse();
        assertThat(amx.reason()).contains("AMXINT8").contains("lacks amx_int8, amx_tile").contains("AMD EPYC 7763");
        assertThat(amx.figures()).containsEntry("missing_flags", List.of("amx_int8", "amx_tile"));

        PreflightCheck.Outcome fp8 = Preflight.evaluate(epyc, need(KtMethod.FP8), HEADROOM);
        assertThat(fp8.passed()).isFalse();
        assertThat(fp8.reason()).contains("lacks avx512_bf16, avx512f");

        assertThat(Preflight.evaluate(epyc, need(KtMethod.RAWINT4), HEADROOM).reason()).contains("lacks avx512f");
        assertThat(Preflight.evaluate(epyc, need(KtMethod.BF16), HEADROOM).passed()).isFalse();
        assertThat(Preflight.evaluate(epyc, need(KtMethod.LLAMAFILE), HEADROOM).passed()).isTrue();
        assertThat(Preflight.evaluate(epyc, need(KtMethod.KT_NATIVE), HEADROOM).passed()).isTrue();
    }

    @Test
    void sapphireRapidsRunsEveryMethod() throws Exception {
        HardwareProfile spr = probe("cpuinfo-intel-xeon-8480.txt", "meminfo-1t.txt", 1, null);

        for (KtMethod method : KtMethod.values()) {
            assertThat(Preflight.evaluate(spr, need(method), HEADROOM).passed()).as(method.name()).isTrue();
        }
    }

    @Test
    void memoryWallComparesModelBytesWithRamPlusVramMinusHeadroom() throws Exception {
        HardwareProfile epyc = probe("cpuinfo-amd-epyc-7763.txt", "meminfo-384g.txt", 2, fakeNvidiaSmi());
        long budget = 384 * GIB + epyc.vramBytes() - HEADROOM;

        // The runbook's case: an INT8 DeepSeek of 624 GB against 384 GB RAM and the GPUs.
        long deepseekInt8 = 624 * GIB;
        PreflightCheck.Outcome tooBig = Preflight.evaluate(epyc,
                new Preflight.Requirement(KtMethod.LLAMAFILE, OptionalLong.of(deepseekInt8)), HEADROOM);
        assertThat(tooBig.passed()).isFalse();
        assertThat(tooBig.reason()).contains("model needs 624.0 GiB (" + deepseekInt8 + " bytes)")
                .contains("(" + budget + " bytes)").contains("RAM 384.0 GiB").contains("headroom 4.0 GiB");
        assertThat(tooBig.figures()).containsEntry("model_bytes", deepseekInt8).containsEntry("budget_bytes", budget);

        PreflightCheck.Outcome exactlyFits = Preflight.evaluate(epyc,
                new Preflight.Requirement(KtMethod.LLAMAFILE, OptionalLong.of(budget)), HEADROOM);
        assertThat(exactlyFits.passed()).isTrue();
        assertThat(Preflight.evaluate(epyc,
                new Preflight.Requirement(KtMethod.LLAMAFILE, OptionalLong.of(budget + 1)), HEADROOM).passed()).isFalse();
        assertThat(Preflight.evaluate(epyc, need(KtMethod.LLAMAFILE), HEADROOM).reason())
                .contains("model size unknown");
    }

    @Test
    void aHungNvidiaSmiIsKilledAtTheTimeout() throws Exception {
        Path script = executable("hung-smi.sh", "#!/bin/sh\nexec sleep 30\n");
        HardwareProfile hw = new HardwareProbe(new HardwareProbe.Sources(fixture("cpuinfo-amd-epyc-7763.txt"),
                fixture("meminfo-384g.txt"), dir, script.toString(), Duration.ofMillis(300))).probe();

        assertThat(hw.gpus()).isEmpty();
        assertThat(hw.notes()).anySatisfy(note -> assertThat(note).contains("did not answer within"));
    }

    private static Preflight.Requirement need(KtMethod method) {
        return new Preflight.Requirement(method, OptionalLong.empty());
    }

    private HardwareProfile probe(String cpuinfo, String meminfo, int nodes, Path nvidiaSmi) throws Exception {
        Path nodeDir = Files.createDirectories(dir.resolve("node-" + cpuinfo));
        for (int i = 0; i < nodes; i++) {
            Files.createDirectories(nodeDir.resolve("node" + i));
        }
        Files.createDirectories(nodeDir.resolve("power")); // not a node
        return new HardwareProbe(new HardwareProbe.Sources(fixture(cpuinfo), fixture(meminfo), nodeDir,
                nvidiaSmi == null ? dir.resolve("no-such-nvidia-smi").toString() : nvidiaSmi.toString(),
                Duration.ofSeconds(10))).probe();
    }

    private Path fakeNvidiaSmi() throws IOException {
        return executable("nvidia-smi", """
                #!/bin/sh
                # What nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits prints.
                [ "$1" = "--query-gpu=name,memory.total" ] || exit 2
                echo "NVIDIA GeForce RTX 4090, 24564"
                echo "NVIDIA RTX A6000, 49140"
                """);
    }

    private Path executable(String name, String text) throws IOException {
        Path script = dir.resolve(name);
        Files.writeString(script, text);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    static Path fixture(String name) throws URISyntaxException {
        return Path.of(PreflightTest.class.getResource("/policy/" + name).toURI());
    }
}
