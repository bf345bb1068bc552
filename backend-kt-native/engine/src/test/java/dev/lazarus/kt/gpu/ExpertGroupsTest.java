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
        int k = 2, tile = PrefillKernels.TILE, tokens = tile + 3;
        // every token chooses expert 3 first, tokens alternate 1 and 2 (a CPU expert) second
        int[] ids = new int[tokens * k];
        for (int t = 0; t < tokens; t++) {
            ids[t * k] = 3;
            ids[t * k + 1] = t % 2 == 0 ? 1 : 2;
        }
        ExpertGroups g = ExpertGroups.of(ids, ids.length, 4, e -> e != 2);

        // expert 1: the even tokens (one tile); expert 3: every token, a full tile then 3
        int even = (tokens + 1) / 2;
        assertThat(g.tileCount).isEqualTo(3);
        assertThat(tiles(g)).containsExactly(List.of(1, 0, even), List.of(3, even, tile), List.of(3, even + tile, 3));
        List<Integer> slots = new ArrayList<>();
        for (int t = 0; t < tokens; t += 2) {
            slots.add(t * k + 1);
        }
        for (int t = 0; t < tokens; t++) {
            slots.add(t * k);
        }
        assertThat(g.slots).containsExactly(slots.stream().mapToInt(Integer::intValue).toArray());
        List<Integer> host = new ArrayList<>();
        for (int t = 1; t < tokens; t += 2) {
            host.add(t * k + 1);
        }
        assertThat(g.hostSlots[2]).containsExactly(host.stream().mapToInt(Integer::intValue).toArray());
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
        int tile = PrefillKernels.TILE;
        assertThat(ExpertGroups.denseTiles(2 * tile + 3)).containsExactly(0, 0, tile, 0, tile, tile, 0, 2 * tile, 3);
        assertThat(ExpertGroups.denseTiles(tile)).containsExactly(0, 0, tile);
    }

    private static List<List<Integer>> tiles(ExpertGroups g) {
        List<List<Integer>> out = new ArrayList<>();
        for (int i = 0; i < g.tileCount; i++) {
            out.add(List.of(g.tiles[3 * i], g.tiles[3 * i + 1], g.tiles[3 * i + 2]));
        }
        return out;
    }
}
