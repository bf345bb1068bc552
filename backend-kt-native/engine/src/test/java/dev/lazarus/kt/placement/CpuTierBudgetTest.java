package dev.lazarus.kt.placement;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.model.ExpertWeights;
import dev.lazarus.kt.placement.TierBudget.CpuExperts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuTierBudgetTest {

    static final ExpertCatalog CATALOG = Catalogs.of(1, 4, 8); // 32 experts
    static final long E = Catalogs.expertBytes();
    static final ToLongFunction<ExpertWeights> STORED = ExpertWeights::bytes;
    static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    @Test
    void theCpuTierIsWhatTheGpuLeavesWhicheverExpertsItHolds() {
        assertThat(CpuTierBudget.needed(CATALOG, STORED, 0)).isEqualTo(32 * E);
        // the GPU holds 8 experts' bytes: at least 7 of them surely, whatever it picks
        assertThat(CpuTierBudget.needed(CATALOG, STORED, 8 * E)).isEqualTo(25 * E);
        assertThat(CpuTierBudget.needed(CATALOG, w -> 2 * w.bytes(), 8 * E)).as("counted in the copies' size")
                .isEqualTo(50 * E);
        assertThat(CpuTierBudget.needed(CATALOG, STORED, 100 * E)).as("one expert's slack").isEqualTo(E);
    }

    @Test
    void withAGpuTheCopiesGoToRamWhenTheyFitInAvailableMemoryLessAMargin() {
        long needed = CpuTierBudget.needed(CATALOG, STORED, 8 * E);
        HostMemory roomy = new HostMemory(64 * GIB, 10 * GIB);
        CpuTierBudget fits = CpuTierBudget.decide(CpuExperts.AUTO, CATALOG, STORED, 8 * E, true, roomy);
        assertThat(fits.bytes()).isEqualTo(needed);
        assertThat(fits.limit()).as("available less max(2 GiB, 10 % of the total)").isEqualTo(10 * GIB - (long) (6.4 * GIB));
        assertThat(fits.why()).startsWith("RAM tier");

        HostMemory tight = new HostMemory(16 * GIB, 2 * GIB + needed - 1);
        CpuTierBudget mapped = CpuTierBudget.decide(CpuExperts.AUTO, CATALOG, STORED, 8 * E, true, tight);
        assertThat(mapped.bytes()).as("the 2 GiB margin leaves one byte too few").isZero();
        assertThat(mapped.why()).startsWith("memory-mapped");
        assertThat(CpuTierBudget.decide(CpuExperts.AUTO, CATALOG, STORED, 8 * E, true,
                new HostMemory(16 * GIB, 2 * GIB + needed)).bytes()).isEqualTo(needed);

        assertThat(CpuTierBudget.decide(CpuExperts.RAM, CATALOG, STORED, 8 * E, true, tight).bytes())
                .as("cpu-experts: ram copies anyway").isEqualTo(needed);
        assertThat(CpuTierBudget.decide(CpuExperts.MAPPED, CATALOG, STORED, 8 * E, true, roomy).bytes()).isZero();
    }

    @Test
    void withoutAGpuAQuarterOfTheMachinesMemoryAsBefore() {
        long all = 32 * E;
        HostMemory memory = new HostMemory(4 * all, 0); // nothing available: not what decides without a GPU
        assertThat(CpuTierBudget.decide(CpuExperts.AUTO, CATALOG, STORED, 0, false, memory).bytes()).isEqualTo(all);
        assertThat(CpuTierBudget.decide(CpuExperts.AUTO, CATALOG, STORED, 0, false, new HostMemory(4 * all - 4, 1L << 40))
                .bytes()).isZero();
    }

    @Test
    void memAvailableIsReadFromMeminfo() throws Exception {
        Path meminfo = dir.resolve("meminfo");
        Files.writeString(meminfo, "MemTotal:       16303948 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n");
        assertThat(HostMemory.memAvailable(meminfo)).isEqualTo(8_000_000L * 1024);
        assertThat(HostMemory.memAvailable(dir.resolve("missing"))).isEqualTo(-1);
        assertThat(HostMemory.now().available()).isPositive().isLessThanOrEqualTo(HostMemory.now().total());
    }
}
