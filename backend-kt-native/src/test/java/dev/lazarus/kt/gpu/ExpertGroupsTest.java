package dev.lazarus.kt.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The grouping of a prompt chunk's routing slots by expert that the batched expert kernels take. */
class ExpertGroupsTest {

    @Test
    void deviceSlotsAreGroupedByExpertInTilesAndHostSlotsListedPerExpert() {
        int k = 2;
        // 11 tokens: every token chooses expert 3 first, tokens alternate 1 and 2 (a CPU expert) second
        int[] ids = new int[11 * k];
        for (int t = 0; t < 11; t++) {
            ids[t * k] = 3;
            ids[t * k + 1] = t % 2 == 0 ? 1 : 2;
        }
        ExpertGroups g = ExpertGroups.of(ids, ids.length, 4, e -> e != 2);

        // expert 1: tokens 0, 2, .., 10 (6 slots, one tile); expert 3: 11 slots, a full tile then 3
        assertThat(g.tileCount).isEqualTo(3);
        assertThat(tiles(g)).containsExactly(List.of(1, 0, 6), List.of(3, 6, 8), List.of(3, 14, 3));
        assertThat(g.slots).containsExactly(1, 5, 9, 13, 17, 21, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20);
        assertThat(g.hostSlots[2]).containsExactly(3, 7, 11, 15, 19);
        assertThat(g.hostSlots[0]).isNull();
        assertThat(g.hostSlots[1]).isNull();
        assertThat(g.anyOnHost()).isTrue();
        for (int i = 0; i < g.tileCount; i++) { // every slot of a tile is its expert's
            for (int j = 0; j < g.tiles[3 * i + 2]; j++) {
                assertThat(ids[g.slots[g.tiles[3 * i + 1] + j]]).isEqualTo(g.tiles[3 * i]);
            }
        }
    }

    @Test
    void onlyTheGivenSlotsCountAndAllOnDeviceLeavesNothingToTheHost() {
        int[] ids = {0, 1, 1, 0, 7, 7}; // the last two are beyond the slot count
        ExpertGroups g = ExpertGroups.of(ids, 4, 2, e -> true);
        assertThat(tiles(g)).containsExactly(List.of(0, 0, 2), List.of(1, 2, 2));
        assertThat(g.slots).containsExactly(0, 3, 1, 2);
        assertThat(g.anyOnHost()).isFalse();
    }

    @Test
    void anIdOutsideTheExpertsIsRefused() {
        assertThatThrownBy(() -> ExpertGroups.of(new int[] {0, 4}, 2, 4, e -> true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expert id 4");
    }

    @Test
    void denseTilesCoverEveryTokenOnceWithAPartialLastTile() {
        assertThat(ExpertGroups.denseTiles(19)).containsExactly(0, 0, 8, 0, 8, 8, 0, 16, 3);
        assertThat(ExpertGroups.denseTiles(8)).containsExactly(0, 0, 8);
    }

    private static List<List<Integer>> tiles(ExpertGroups g) {
        List<List<Integer>> out = new ArrayList<>();
        for (int i = 0; i < g.tileCount; i++) {
            out.add(List.of(g.tiles[3 * i], g.tiles[3 * i + 1], g.tiles[3 * i + 2]));
        }
        return out;
    }
}
