package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendException;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * llama-server's {@code /tokenize} and {@code /detokenize}, in its request and answer shapes, over the model's own
 * tokenizer (which gives llama.cpp's ids for the same GGUF). {@code content} is a string, or a list of strings and
 * token ids (special tokens added before the first string only); {@code add_special} defaults to false,
 * {@code parse_special} to true; {@code with_pieces} gives each token's text (its bytes as numbers where they are
 * no UTF-8 of their own). Detokenizing writes each token's text, control tokens included, as llama-server does.
 */
final class TokenizerEndpoints {

    private TokenizerEndpoints() {}

    static Map<String, Object> tokenize(Tokenizer tokenizer, Map<String, Object> request) {
        boolean addSpecial = flag(request, "add_special", false);
        boolean parseSpecial = flag(request, "parse_special", true);
        boolean withPieces = flag(request, "with_pieces", false);
        List<Object> tokens = new ArrayList<>();
        Object content = request.get("content");
        if (content != null) {
            for (int id : ids(tokenizer, content, addSpecial, parseSpecial)) {
                if (withPieces) {
                    Map<String, Object> token = new LinkedHashMap<>();
                    token.put("id", id);
                    token.put("piece", piece(tokenizer.tokenBytes(id, true)));
                    tokens.add(token);
                } else {
                    tokens.add(id);
                }
            }
        }
        return Map.of("tokens", tokens);
    }

    static Map<String, Object> detokenize(Tokenizer tokenizer, Map<String, Object> request) {
        Object tokens = request.get("tokens");
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        if (tokens != null) {
            if (!(tokens instanceof List<?> ids)) {
                throw BackendException.invalidRequest("'tokens' must be an array of token ids", "tokens");
            }
            for (Object token : ids) {
                text.writeBytes(tokenizer.tokenBytes(tokenId(tokenizer, token, "tokens"), true));
            }
        }
        return Map.of("content", text.toString(StandardCharsets.UTF_8));
    }

    private static int[] ids(Tokenizer tokenizer, Object content, boolean addSpecial, boolean parseSpecial) {
        if (content instanceof String text) {
            return tokenizer.encode(text, addSpecial, parseSpecial);
        }
        if (!(content instanceof List<?> parts)) {
            throw BackendException.invalidRequest("'content' must be a string or a list of strings and token ids",
                    "content");
        }
        List<Integer> ids = new ArrayList<>();
        boolean first = true;
        for (Object part : parts) {
            if (part instanceof String text) {
                for (int id : tokenizer.encode(text, first && addSpecial, parseSpecial)) {
                    ids.add(id);
                }
                first = false;
            } else {
                ids.add(tokenId(tokenizer, part, "content"));
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int tokenId(Tokenizer tokenizer, Object token, String param) {
        if (!(token instanceof Integer id) || id < 0 || id >= tokenizer.vocabSize()) {
            throw BackendException.invalidRequest("'" + param + "' holds " + token + ", which is no token id of this "
                    + "model (0 to " + (tokenizer.vocabSize() - 1) + ")", param);
        }
        return id;
    }

    private static Object piece(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException partOfACharacter) {
            List<Integer> values = new ArrayList<>(bytes.length);
            for (byte b : bytes) {
                values.add(b & 0xff);
            }
            return values;
        }
    }

    private static boolean flag(Map<String, Object> request, String name, boolean otherwise) {
        Object value = request.get(name);
        if (value == null) {
            return otherwise;
        }
        if (!(value instanceof Boolean b)) {
            throw BackendException.invalidRequest("'" + name + "' must be a boolean", name);
        }
        return b;
    }
}
