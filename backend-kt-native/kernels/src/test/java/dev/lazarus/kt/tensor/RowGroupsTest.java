package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.BitSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packed layouts' super-block order: every super-block of the matrix exactly once, a row's super-blocks its
 * group's size apart, the rows of a group side by side (so that a pair reads one sequential stream), the last
 * group holding what is left (an odd row count ends in a group of one, read as ggml's row-major order), and a
 * kernel offset mapped back to its row.
 */
class RowGroupsTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void everySuperBlockOnceWithTheRowsOfAGroupSideBySide(int group) {
        for (int rows = 1; rows <= 13; rows++) {
            for (int nb = 1; nb <= 4; nb++) {
                RowGroups groups = new RowGroups(group, rows, nb);
                String what = "groups of %d, %d rows × %d super-blocks".formatted(group, rows, nb);
                assertThat(groups.blocks()).isEqualTo((long) rows * nb);
                BitSet seen = new BitSet();
                for (int r = 0; r < rows; r++) {
                    int first = r - r % group, size = Math.min(group, rows - first);
                    assertThat(groups.stride(r)).as("%s: row %d", what, r).isEqualTo(size);
                    assertThat(groups.row((long) r * nb * 128, 128)).isEqualTo(r);
                    for (int b = 0; b < nb; b++) {
                        long g = groups.block(r, b);
                        assertThat(g).as("%s: row %d block %d", what, r, b)
                                .isEqualTo((long) first * nb + (long) b * size + (r - first));
                        assertThat(seen.get((int) g)).as("%s: block %d twice", what, g).isFalse();
                        seen.set((int) g);
                        if (r + 1 < first + size) {
                            assertThat(groups.block(r + 1, b)).as("%s: row %d's neighbour", what, r).isEqualTo(g + 1);
                        }
                    }
                }
                assertThat(seen.cardinality()).as(what).isEqualTo(rows * nb);
                assertThat(seen.nextClearBit(0)).as(what).isEqualTo(rows * nb);
                if (rows % group == 1) {
                    int last = rows - 1;
                    assertThat(groups.block(last, nb - 1)).as("%s: the lone last row in row-major order", what)
                            .isEqualTo((long) last * nb + nb - 1);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 3, -2})
    void groupsArePowersOfTwo(int group) {
        assertThatThrownBy(() -> new RowGroups(group, 4, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
