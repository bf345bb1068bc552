package dev.lazarus.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The one reading of /proc/cpuinfo and /proc/meminfo that the engine and the gateway's preflight share. */
class HostFilesTest {

    @Test
    void anX86CpuinfoGivesTheFirstProcessorsVendorModelAndFlagsAndCountsProcessors() {
        CpuInfo cpu = CpuInfo.parse(List.of(
                "processor\t: 0", "vendor_id\t: AuthenticAMD", "model name\t: AMD EPYC 9R45",
                "flags\t\t: fpu AVX2 avx512f avx512_bf16", "",
                "processor\t: 1", "vendor_id\t: AuthenticAMD", "model name\t: AMD EPYC 9R45",
                "flags\t\t: fpu sse2"));
        assertThat(cpu.vendor()).isEqualTo("AuthenticAMD");
        assertThat(cpu.model()).isEqualTo("AMD EPYC 9R45");
        assertThat(cpu.flags()).containsExactlyInAnyOrder("fpu", "avx2", "avx512f", "avx512_bf16");
        assertThat(cpu.processors()).isEqualTo(2);
    }

    @Test
    void anArmCpuinfoNamesItsImplementerAndFeatures() {
        CpuInfo cpu = CpuInfo.parse(List.of("processor\t: 0", "Features\t: fp asimd sve", "CPU implementer\t: 0x41"));
        assertThat(cpu.vendor()).isEqualTo("arm (implementer 0x41)");
        assertThat(cpu.model()).isEqualTo("unknown");
        assertThat(cpu.flags()).containsExactlyInAnyOrder("fp", "asimd", "sve");
    }

    @Test
    void meminfoValuesAreBytesAndAMissingOrBrokenLineSaysSo() {
        List<String> lines = List.of("MemTotal:       24576000 kB", "MemAvailable:   1000 kB", "HugePages_Total:       4");
        assertThat(MemInfo.bytes(lines, "MemTotal")).hasValue(24_576_000L * 1024);
        assertThat(MemInfo.bytes(lines, "MemAvailable")).hasValue(1_024_000L);
        assertThat(MemInfo.bytes(lines, "HugePages_Total")).hasValue(4);
        assertThat(MemInfo.bytes(lines, "SwapTotal")).isEqualTo(OptionalLong.empty());
        assertThatThrownBy(() -> MemInfo.bytes(List.of("MemTotal: lots kB"), "MemTotal"))
                .isInstanceOf(NumberFormatException.class);
    }
}
