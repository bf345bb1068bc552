package dev.lazarus.kt.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * How byte-level BPE text is cut into words before merging, chosen by {@code tokenizer.ggml.pre}.
 * Each kind is the list of split regexes llama.cpp applies one after the other (each step cuts
 * the chunks of the previous one), with the same names and the same per-kind flags:
 * {@code ignoreMerges} (a word that is itself a token is taken whole) and {@code addBos} (the
 * default for {@code tokenizer.ggml.add_bos_token}).
 */
enum PreTokenizer {

    DEFAULT(Set.of("default"), false, false,
            new RegexSplitter("[\\p{P}\\$\\+<=>\\^~\\|]+"),
            ScannerSplitters.GPT2,
            new RegexSplitter("\\p{N}+"),
            new RegexSplitter("[0-9][0-9][0-9]")),
    GPT2(Set.of("gpt2", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "mpt", "olmo",
            "jais", "exaone4"), false, false,
            ScannerSplitters.GPT2),
    LLAMA3(Set.of("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"), true, true,
            ScannerSplitters.LLAMA3),
    /** Same split as Llama 3 without its flags. */
    LLAMA3_SPLIT(Set.of("dbrx", "smaug-bpe"), false, false,
            ScannerSplitters.LLAMA3),
    QWEN2(Set.of("qwen2", "deepseek-r1-qwen", "megrez", "stablelm2", "hunyuan"), false, false,
            new RegexSplitter("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
                    + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")),
    DEEPSEEK_LLM(Set.of("deepseek-llm"), false, false,
            new RegexSplitter("[\r\n]"),
            // letters of the Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, ... blocks, as llama.cpp lists them
            new RegexSplitter("\\s?[\\x{41}-\\x{5A}\\x{61}-\\x{7A}\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}"
                    + "\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}"
                    + "\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}"
                    + "\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
                    + "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}"
                    + "\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}"
                    + "\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}"
                    + "\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}"
                    + "\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
                    + "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
                    + "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}"
                    + "\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}"
                    + "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}"
                    + "\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}"
                    + "\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}"
                    + "\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+"),
            new RegexSplitter("\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+"),
            new RegexSplitter("\\s+$"),
            new RegexSplitter(Regexes.CJK_HANGUL),
            new RegexSplitter("\\p{N}+")),
    DEEPSEEK_CODER(Set.of("deepseek-coder"), false, false,
            new RegexSplitter("[\r\n]"),
            new RegexSplitter("\\s?\\p{L}+"),
            new RegexSplitter("\\s?\\p{P}+"),
            new RegexSplitter(Regexes.CJK_HANGUL),
            new RegexSplitter("\\p{N}")),
    DEEPSEEK3(Set.of("deepseek-v3", "hunyuan-dense", "joyai-llm"), false, false,
            new RegexSplitter("\\p{N}{1,3}"),
            new RegexSplitter("[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+"),
            new RegexSplitter("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                    + "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")),
    STARCODER(Set.of("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"), false, false,
            new RegexSplitter("\\p{N}"),
            ScannerSplitters.GPT2);

    private final Set<String> names;
    private final boolean ignoreMerges;
    private final boolean addBos;
    private final List<Splitter> steps;

    PreTokenizer(Set<String> names, boolean ignoreMerges, boolean addBos, Splitter... steps) {
        this.names = names;
        this.ignoreMerges = ignoreMerges;
        this.addBos = addBos;
        this.steps = List.of(steps);
    }

    /** The kind for a {@code tokenizer.ggml.pre} value; missing means {@link #DEFAULT}, like llama.cpp. */
    static PreTokenizer named(String name) {
        if (name == null || name.isEmpty()) {
            return DEFAULT;
        }
        for (PreTokenizer kind : values()) {
            if (kind.names.contains(name)) {
                return kind;
            }
        }
        throw new TokenizerException("unknown pre-tokenizer type: '" + name + "'");
    }

    boolean ignoreMerges() {
        return ignoreMerges;
    }

    boolean addBosByDefault() {
        return addBos;
    }

    /** The words of a text, each as its UTF-8 bytes. */
    List<byte[]> split(String text) {
        int[] cps = text.codePoints().toArray();
        IntList lengths = IntList.of(cps.length);
        for (Splitter step : steps) {
            lengths = step.split(cps, lengths);
        }
        List<byte[]> words = new ArrayList<>(lengths.size());
        int start = 0;
        for (int i = 0; i < lengths.size(); i++) {
            int length = lengths.get(i);
            words.add(new String(cps, start, length).getBytes(StandardCharsets.UTF_8));
            start += length;
        }
        return words;
    }

    /** Shared regex texts (a holder class, since enum constants cannot read the enum's own statics). */
    private static final class Regexes {
        static final String CJK_HANGUL = "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";
    }
}
