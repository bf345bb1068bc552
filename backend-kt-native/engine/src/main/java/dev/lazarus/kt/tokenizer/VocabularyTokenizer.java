package dev.lazarus.kt.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * What byte-level BPE and SentencePiece share: cutting special tokens out of raw text before the
 * model-specific algorithm runs on the pieces in between, BOS/EOS, and rendering tokens to bytes.
 */
abstract sealed class VocabularyTokenizer implements Tokenizer permits BpeTokenizer, SpmTokenizer {

    /** A piece of the input: either a special token already resolved, or text still to tokenize. */
    protected record Fragment(int token, String text) {
        boolean isText() {
            return text != null;
        }
    }

    protected final Vocabulary vocab;
    private final byte[][] renderedBytes;

    /**
     * @param normalBytes the bytes a normal token's text stands for (the byte-level or the
     *                    SentencePiece spelling); every token is rendered once here, like
     *                    llama.cpp's piece cache
     */
    protected VocabularyTokenizer(Vocabulary vocab, Function<String, byte[]> normalBytes) {
        this.vocab = vocab;
        this.renderedBytes = new byte[vocab.size()][];
        for (int id = 0; id < vocab.size(); id++) {
            renderedBytes[id] = render(id, normalBytes);
        }
    }

    /** Appends the ids of one run of plain text. */
    protected abstract void encodeText(String text, boolean afterSpecial, IntList out);

    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        IntList out = new IntList(text.length() / 3 + 4);
        if (addSpecial && vocab.addBos) {
            out.add(vocab.bos);
        }
        boolean afterSpecial = true;
        for (Fragment fragment : partition(text, parseSpecial)) {
            if (fragment.isText()) {
                encodeText(fragment.text(), afterSpecial, out);
                afterSpecial = false;
            } else {
                out.add(fragment.token());
                afterSpecial = true;
            }
        }
        if (addSpecial && vocab.addEos && vocab.eos != Vocabulary.NONE) {
            out.add(vocab.eos);
        }
        return out.toArray();
    }

    /**
     * Cuts special tokens out of the text, longest token first, as llama.cpp's
     * {@code tokenizer_st_partition} does. Control and unknown tokens only when {@code parseSpecial}.
     */
    private List<Fragment> partition(String text, boolean parseSpecial) {
        List<Fragment> fragments = new ArrayList<>();
        if (text.isEmpty()) {
            return fragments;
        }
        fragments.add(new Fragment(-1, text));
        for (int id : vocab.specialsByLength) {
            if (!parseSpecial && vocab.types[id].isSpecial()) {
                continue;
            }
            String special = vocab.texts[id];
            List<Fragment> next = null;
            for (int f = 0; f < fragments.size(); f++) {
                Fragment fragment = fragments.get(f);
                int at = fragment.isText() ? fragment.text().indexOf(special) : -1;
                if (at < 0) {
                    if (next != null) {
                        next.add(fragment);
                    }
                    continue;
                }
                if (next == null) {
                    next = new ArrayList<>(fragments.subList(0, f));
                }
                String rest = fragment.text();
                while (at >= 0) {
                    if (at > 0) {
                        next.add(new Fragment(-1, rest.substring(0, at)));
                    }
                    next.add(new Fragment(id, null));
                    rest = rest.substring(at + special.length());
                    at = rest.indexOf(special);
                }
                if (!rest.isEmpty()) {
                    next.add(new Fragment(-1, rest));
                }
            }
            if (next != null) {
                fragments = next;
            }
        }
        return fragments;
    }

    @Override
    public String decode(int[] ids, boolean renderSpecial) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(ids.length * 4);
        for (int id : ids) {
            out.writeBytes(tokenBytes(id, renderSpecial));
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Override
    public byte[] tokenBytes(int id, boolean renderSpecial) {
        checkId(id);
        if (!renderSpecial && vocab.types[id].isSpecial()) {
            return new byte[0];
        }
        return renderedBytes[id].clone();
    }

    private byte[] render(int id, Function<String, byte[]> normalBytes) {
        String text = vocab.texts[id];
        return switch (vocab.types[id]) {
            case CONTROL, UNKNOWN, USER_DEFINED -> text.getBytes(StandardCharsets.UTF_8);
            case NORMAL -> normalBytes.apply(text);
            case BYTE -> new byte[] {(byte) Integer.parseInt(text.substring(3, 5), 16)};
            case UNUSED, UNDEFINED -> new byte[0];
        };
    }

    @Override
    public String piece(int id) {
        checkId(id);
        return vocab.texts[id];
    }

    @Override
    public OptionalInt tokenId(String piece) {
        int id = vocab.id(piece);
        return id == Vocabulary.NONE ? OptionalInt.empty() : OptionalInt.of(id);
    }

    @Override
    public TokenType tokenType(int id) {
        checkId(id);
        return vocab.types[id];
    }

    @Override
    public int vocabSize() {
        return vocab.size();
    }

    @Override
    public int bos() {
        return vocab.bos;
    }

    @Override
    public int eos() {
        return vocab.eos;
    }

    @Override
    public boolean addsBos() {
        return vocab.addBos;
    }

    @Override
    public boolean isEog(int id) {
        return id >= 0 && vocab.eog.get(id);
    }

    private void checkId(int id) {
        if (id < 0 || id >= vocab.size()) {
            throw new IllegalArgumentException("token id " + id + " outside the vocabulary of " + vocab.size());
        }
    }
}
