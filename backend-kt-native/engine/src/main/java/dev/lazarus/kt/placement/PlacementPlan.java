package dev.lazarus.kt.placement;

import java.util.Arrays;

/** An immutable decision: the tier of every (slot, expert). */
public final class PlacementPlan {

    private final Tier[][] tiers;

    PlacementPlan(Tier[][] tiers) {
        this.tiers = new Tier[tiers.length][];
        for (int s = 0; s < tiers.length; s++) {
            this.tiers[s] = tiers[s].clone();
        }
    }

    /** Every expert in one tier. */
    public static PlacementPlan all(ExpertCatalog catalog, Tier tier) {
        Tier[][] t = new Tier[catalog.layerCount()][catalog.expertsPerLayer()];
        for (Tier[] row : t) {
            Arrays.fill(row, tier);
        }
        return new PlacementPlan(t);
    }

    public Tier tier(int slot, int expert) {
        return tiers[slot][expert];
    }

    public int layerCount() {
        return tiers.length;
    }

    public int count(Tier tier) {
        int n = 0;
        for (Tier[] row : tiers) {
            for (Tier t : row) {
                n += t == tier ? 1 : 0;
            }
        }
        return n;
    }

    public int count(int slot, Tier tier) {
        int n = 0;
        for (Tier t : tiers[slot]) {
            n += t == tier ? 1 : 0;
        }
        return n;
    }

    /** The weight bytes, as stored in the file, of the experts planned for {@code tier}. */
    public long bytes(ExpertCatalog catalog, Tier tier) {
        long sum = 0;
        for (int s = 0; s < tiers.length; s++) {
            for (int e = 0; e < tiers[s].length; e++) {
                sum += tiers[s][e] == tier ? catalog.expertBytes(s, e) : 0;
            }
        }
        return sum;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PlacementPlan p && Arrays.deepEquals(tiers, p.tiers);
    }

    @Override
    public int hashCode() {
        return Arrays.deepHashCode(tiers);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Tier[] row : tiers) {
            for (Tier t : row) {
                sb.append(t.id().charAt(0));
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
