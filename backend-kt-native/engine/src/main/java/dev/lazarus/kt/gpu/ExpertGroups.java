package dev.lazarus.kt.gpu;

import static dev.lazarus.kt.gpu.PrefillKernels.TILE;

import java.util.function.IntPredicate;

/**
 * One block's routing of a prompt chunk grouped by expert, what the batched expert kernels of prefill.cu take: the
 * routing slots (slot {@code s}: token {@code s / k}'s {@code s % k}-th choice) of the experts the device computes,
 * sorted by expert and cut into tiles of at most {@link PrefillKernels#TILE} slots of one expert (each tile reads its
 * expert's weight rows once for all its tokens), and per expert the slots the host computes. Within an expert the
 * slots keep token order.
 */
final class ExpertGroups {

    /** Per tile {expert, first slot index into {@link #slots}, count}. */
    final int[] tiles;
    final int tileCount;
    /** The device-computed slots, by expert, then by slot. */
    final int[] slots;
    /** Per expert the host-computed slots in order, or null when it has none. */
    final int[][] hostSlots;

    private ExpertGroups(int[] tiles, int tileCount, int[] slots, int[][] hostSlots) {
        this.tiles = tiles;
        this.tileCount = tileCount;
        this.slots = slots;
        this.hostSlots = hostSlots;
    }

    /**
     * Groups the chosen expert ids {@code ids} (token {@code t}'s choices at {@code [t·k, t·k + k)}) of a block of
     * {@code experts} experts; {@code onDevice} says which experts the device computes.
     */
    static ExpertGroups of(int[] ids, int slotCount, int experts, IntPredicate onDevice) {
        int[] counts = new int[experts];
        for (int s = 0; s < slotCount; s++) {
            int e = ids[s];
            if (e < 0 || e >= experts) {
                throw new IllegalArgumentException("expert id " + e + " outside 0.." + (experts - 1));
            }
            counts[e]++;
        }
        int[] start = new int[experts];
        int deviceSlots = 0, tileCount = 0;
        int[][] host = new int[experts][];
        for (int e = 0; e < experts; e++) {
            if (counts[e] == 0) {
                continue;
            }
            if (onDevice.test(e)) {
                start[e] = deviceSlots;
                deviceSlots += counts[e];
                tileCount += (counts[e] + TILE - 1) / TILE;
            } else {
                host[e] = new int[counts[e]];
            }
        }
        int[] slots = new int[deviceSlots];
        int[] filled = new int[experts];
        for (int s = 0; s < slotCount; s++) {
            int e = ids[s];
            if (host[e] != null) {
                host[e][filled[e]++] = s;
            } else {
                slots[start[e] + filled[e]++] = s;
            }
        }
        int[] tiles = new int[3 * tileCount];
        int t = 0;
        for (int e = 0; e < experts; e++) {
            if (counts[e] == 0 || host[e] != null) {
                continue;
            }
            for (int first = 0; first < counts[e]; first += TILE) {
                tiles[3 * t] = e;
                tiles[3 * t + 1] = start[e] + first;
                tiles[3 * t + 2] = Math.min(TILE, counts[e] - first);
                t++;
            }
        }
        return new ExpertGroups(tiles, tileCount, slots, host);
    }

    /** Tiles of {@code tokens} consecutive slots of expert 0 (a dense FFN taken as one expert every token uses). */
    static int[] denseTiles(int tokens) {
        int count = (tokens + TILE - 1) / TILE;
        int[] tiles = new int[3 * count];
        for (int i = 0; i < count; i++) {
            tiles[3 * i + 1] = i * TILE;
            tiles[3 * i + 2] = Math.min(TILE, tokens - i * TILE);
        }
        return tiles;
    }

    /** Whether any slot is computed on the host. */
    boolean anyOnHost() {
        for (int[] h : hostSlots) {
            if (h != null) {
                return true;
            }
        }
        return false;
    }
}
