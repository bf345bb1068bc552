package dev.lazarus.kt.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.placement.PlacementStrategy;
import dev.lazarus.kt.placement.TierBudget;
import org.junit.jupiter.api.Test;

/** The benchmark measures what a user gets by default unless a configuration names a RAM share. */
class GpuDecodeBenchmarkTest {

    @Test
    void withoutARamShareTheCpuExpertsAreWhereTheDefaultPutsThem() {
        GpuDecodeBenchmark.Setup hybrid = GpuDecodeBenchmark.Setup.parse("layers-dynamic:0.1");
        assertThat(hybrid.layers()).isTrue();
        assertThat(hybrid.strategy()).isEqualTo(PlacementStrategy.DYNAMIC);
        assertThat(hybrid.gpuShare()).isEqualTo(0.1);
        assertThat(hybrid.ram()).isEqualTo(TierBudget.CpuTier.AUTO);
        assertThat(GpuDecodeBenchmark.Setup.parse("cpu").ram()).isEqualTo(TierBudget.CpuTier.AUTO);
        assertThat(GpuDecodeBenchmark.Setup.parse("layers-dynamic:0.1:0").ram()).as("mapped, as the benchmark measured before")
                .isEqualTo(new TierBudget.Ratio(0));
        assertThat(GpuDecodeBenchmark.Setup.parse("uniform:0:1+blocking").ram()).isEqualTo(new TierBudget.Ratio(1));
    }
}
