package dev.lazarus.kt.model;

/**
 * Which {@code k} of {@code n} scores ggml's CPU {@code top_k} op keeps: it runs {@code std::partial_sort} of the
 * indices by descending score, which in libstdc++ is a heap selection (a heap of the first {@code k}, then each
 * later index that beats the heap's top replaces it). Equal scores are decided by where that walk meets them, so the
 * walk is reproduced step for step (make_heap, adjust_heap, push_heap as libstdc++ writes them): another selection
 * keeping the same number of the largest scores could keep a different one of two equal ones.
 */
final class GgmlTopK {

    private GgmlTopK() {
    }

    /** {@code keep[t]} for the {@code k} indices in {@code [0, n)} of the largest {@code scores}; all when n <= k. */
    static boolean[] select(float[] scores, int n, int k) {
        boolean[] keep = new boolean[n];
        if (n <= k) {
            java.util.Arrays.fill(keep, true);
            return keep;
        }
        int[] heap = new int[k];
        for (int i = 0; i < k; i++) {
            heap[i] = i;
        }
        if (k >= 2) {
            for (int parent = (k - 2) / 2; ; parent--) {
                adjust(scores, heap, parent, k, heap[parent]);
                if (parent == 0) {
                    break;
                }
            }
        }
        for (int i = k; i < n; i++) {
            if (scores[i] > scores[heap[0]]) { // comp(i, first): the heap's top is its smallest score
                adjust(scores, heap, 0, k, i);
            }
        }
        for (int index : heap) {
            keep[index] = true;
        }
        return keep;
    }

    /** libstdc++'s {@code __adjust_heap} with {@code comp(a, b) = score[a] > score[b]}. */
    private static void adjust(float[] scores, int[] heap, int hole, int len, int value) {
        int top = hole;
        int child = hole;
        while (child < (len - 1) / 2) {
            child = 2 * (child + 1);
            if (scores[heap[child]] > scores[heap[child - 1]]) {
                child--;
            }
            heap[hole] = heap[child];
            hole = child;
        }
        if ((len & 1) == 0 && child == (len - 2) / 2) {
            child = 2 * (child + 1);
            heap[hole] = heap[child - 1];
            hole = child - 1;
        }
        // __push_heap
        int parent = (hole - 1) / 2;
        while (hole > top && scores[heap[parent]] > scores[value]) {
            heap[hole] = heap[parent];
            hole = parent;
            parent = (hole - 1) / 2;
        }
        heap[hole] = value;
    }
}
