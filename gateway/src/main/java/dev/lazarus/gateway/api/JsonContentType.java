package dev.lazarus.gateway.api;

import org.springframework.http.HttpHeaders;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;

/**
 * The one rule for request bodies on {@code /v1} and {@code /admin}: JSON ({@code application/json},
 * any {@code +json} type, any charset) or no Content-Type at all (some clients omit it on a JSON
 * body); anything else is 415 {@code unsupported_media_type}. Whether the body then parses is
 * the reader's business (400).
 */
public final class JsonContentType {

    private JsonContentType() {
    }

    /** Throws the 415 {@link ApiError} unless the headers announce JSON or nothing. */
    public static void require(HttpHeaders headers) {
        MediaType contentType;
        try {
            contentType = headers.getContentType();
        } catch (InvalidMediaTypeException e) {
            throw ErrorMapper.unsupportedMediaType(headers.getFirst(HttpHeaders.CONTENT_TYPE));
        }
        if (contentType != null && !MediaType.APPLICATION_JSON.isCompatibleWith(contentType)
                && !"json".equals(contentType.getSubtypeSuffix())) {
            throw ErrorMapper.unsupportedMediaType(contentType.toString());
        }
    }
}
