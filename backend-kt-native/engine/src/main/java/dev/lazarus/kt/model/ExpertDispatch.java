package dev.lazarus.kt.model;

import java.util.Objects;

/**
 * The model's current {@link ExpertExecutor}, shared by its MoE blocks. Replaced as a whole (when
 * expert placement takes over after loading); a forward pass reads it once per block.
 */
final class ExpertDispatch {

    private volatile ExpertExecutor executor;

    ExpertDispatch(ExpertExecutor executor) {
        this.executor = Objects.requireNonNull(executor);
    }

    ExpertExecutor executor() {
        return executor;
    }

    void use(ExpertExecutor next) {
        executor = Objects.requireNonNull(next);
    }
}
