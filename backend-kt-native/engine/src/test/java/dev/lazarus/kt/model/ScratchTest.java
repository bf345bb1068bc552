package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.VecDotType;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScratchTest {

    private final Scratch.Slot slot = new Scratch.Slot();

    @Test
    void aCallGetsBackWhatTheLastOneBorrowed() {
        Scratch s = slot.take();
        float[] a = s.floats(1024);
        float[] b = s.floats(1024);
        Activation q = s.activation(VecDotType.Q8_K, 512);
        slot.give(s);

        Scratch next = slot.take();
        assertThat(next).isSameAs(s);
        float[] c = next.floats(1024);
        float[] d = next.floats(1024);
        assertThat(new Object[] {c, d}).containsExactlyInAnyOrder(a, b);
        assertThat(next.activation(VecDotType.Q8_K, 512)).isSameAs(q);
        assertThat(next.activation(VecDotType.Q8_0, 512)).isNotSameAs(q).extracting(Activation::type).isEqualTo(VecDotType.Q8_0);
        assertThat(next.floats(512)).hasSize(512);
    }

    @Test
    void aConcurrentCallNeverSharesABuffer() {
        Scratch first = slot.take();
        float[] held = first.floats(64);
        Scratch second = slot.take(); // the first call still holds the slot's scratch
        assertThat(second).isNotSameAs(first);
        assertThat(second.floats(64)).isNotSameAs(held);
        slot.give(second);
        slot.give(first);
        // whichever was given back last is kept; the buffers a call holds are never lent twice
        Scratch again = slot.take();
        assertThat(again).isSameAs(first);
        assertThat(again.floats(64)).isSameAs(held);
        assertThat(again.floats(64)).isNotSameAs(held);
    }

    @Test
    void largeCallsAndUnusedSizesAreNotKept() {
        Scratch big = slot.take();
        big.floats((int) (Scratch.KEPT_BYTES / 4) + 1);
        slot.give(big);
        assertThat(slot.take()).isNotSameAs(big);

        Scratch s = new Scratch();
        float[] once = s.floats(16);
        slot.give(s);
        Scratch t = slot.take();
        t.floats(32); // a call that did not borrow 16-float vectors
        slot.give(t);
        assertThat(slot.take().floats(16)).isNotSameAs(once);
    }

    /** A prompt's buffers survive the decode steps after it in a retaining slot, up to its bytes. */
    @Test
    void aRetainingSlotKeepsWhatEarlierCallsMadeUpToItsBytes() {
        Scratch.Slot retaining = Scratch.Slot.retaining(64 * 1024);
        Scratch prompt = retaining.take();
        float[][] big = prompt.floats(8, 1024); // 32 KB
        retaining.give(prompt);
        Scratch step = retaining.take();
        float[] small = step.floats(1024);
        step.floats(16); // another size
        retaining.give(step);

        Scratch next = retaining.take();
        assertThat(next).isSameAs(prompt);
        float[][] again = next.floats(8, 1024);
        // the very arrays, by identity (all-zero arrays would be equal by content)
        assertThat(List.of(again)).usingElementComparator((x, y) -> x == y ? 0 : 1)
                .containsExactlyInAnyOrder(big).contains(small);
        next.floats(32 * 1024); // 128 KB more: past the slot's bytes
        retaining.give(next);
        assertThat(retaining.take()).isNotSameAs(next);
    }
}
