package dev.lazarus.kt.bench;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;

/**
 * The weight bytes one decode token reads, from the GGUF's tensor table: every dense tensor whole
 * (attention, norms, router, shared experts, output head), routed expert tensors ({@code *_exps})
 * only for the {@code expert_used_count} experts chosen, and one row of the token embedding.
 */
record ActiveWeights(long totalBytes, long activeBytes, long expertBytesPerToken, long headBytes) {

    static ActiveWeights of(GgufFile file) {
        String arch = file.architecture();
        long experts = file.integer(arch + ".expert_count", 0);
        long used = file.integer(arch + ".expert_used_count", 0);
        long total = 0, active = 0, expertActive = 0, head = 0;
        boolean hasOutput = file.findTensor("output.weight").isPresent();
        for (GgufTensorInfo t : file.tensors()) {
            long bytes = t.byteSize();
            total += bytes;
            if (t.name().contains("_exps.")) {
                long share = bytes / experts * used;
                active += share;
                expertActive += share;
            } else if (t.name().equals("token_embd.weight")) {
                active += bytes / t.dim(1);
                if (!hasOutput) {
                    active += bytes;
                    head += bytes;
                }
            } else {
                active += bytes;
                if (t.name().equals("output.weight")) {
                    head += bytes;
                }
            }
        }
        return new ActiveWeights(total, active, expertActive, head);
    }
}
