package dev.lazarus.gateway.api;

import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.cfg.MutableCoercionConfig;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.LogicalType;

/**
 * Request binding that takes JSON scalars only as what they are, as OpenAI does: {@code "5"} is not
 * an integer, {@code 1.5} (or {@code 1.0}) is not an integer, {@code 1} is not a boolean, {@code 5}
 * is not a string. Jackson's defaults coerce all of these silently, so a client's mistake would be
 * answered as if it were right. An integer is still a valid number ({@code "temperature": 1}).
 *
 * <p>Only typed fields are affected: unknown fields bind to {@code Object} and keep whatever JSON
 * type they came with, so llama.cpp extras ({@code top_k}, {@code grammar}, ...) pass through as sent.
 */
final class StrictScalars {

    private StrictScalars() {
    }

    static JsonMapper of(JsonMapper base) {
        return base.rebuild()
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .withCoercionConfig(LogicalType.Integer, c -> fail(c, CoercionInputShape.String,
                        CoercionInputShape.EmptyString, CoercionInputShape.Float, CoercionInputShape.Boolean))
                .withCoercionConfig(LogicalType.Float, c -> fail(c, CoercionInputShape.String,
                        CoercionInputShape.EmptyString, CoercionInputShape.Boolean))
                .withCoercionConfig(LogicalType.Boolean, c -> fail(c, CoercionInputShape.String,
                        CoercionInputShape.EmptyString, CoercionInputShape.Integer, CoercionInputShape.Float))
                .withCoercionConfig(LogicalType.Textual, c -> fail(c, CoercionInputShape.Integer,
                        CoercionInputShape.Float, CoercionInputShape.Boolean))
                .build();
    }

    private static void fail(MutableCoercionConfig config, CoercionInputShape... shapes) {
        for (CoercionInputShape shape : shapes) {
            config.setCoercion(shape, CoercionAction.Fail);
        }
    }
}
