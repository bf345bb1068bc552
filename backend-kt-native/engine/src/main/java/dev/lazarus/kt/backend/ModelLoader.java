package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.BackendConfigException;
import dev.lazarus.backend.api.ModelFiles;
import dev.lazarus.kt.chat.ChatTemplate;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.gpu.GpuTiers;
import dev.lazarus.kt.model.AttentionOrder;
import dev.lazarus.kt.model.KvCacheTypes;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.placement.DeviceTier;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.runtime.EngineOptions;
import dev.lazarus.kt.runtime.InferenceEngine;
import dev.lazarus.kt.runtime.JitWarmup;
import dev.lazarus.kt.speculative.DraftLength;
import dev.lazarus.kt.speculative.Drafter;
import dev.lazarus.kt.speculative.ModelDrafter;
import dev.lazarus.kt.speculative.MtpDrafter;
import dev.lazarus.kt.speculative.NgramDrafter;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.DoubleConsumer;

/**
 * Opens the GGUF, pages its tensors in (the mapping itself is instant; touching every page is what
 * takes time on a large file, and doing it up front keeps the first request fast) while reporting
 * progress, then assembles the model, tokenizer, chat template and engine.
 */
final class ModelLoader {

    private static final System.Logger LOG = System.getLogger(ModelLoader.class.getName());
    private static final String CLASSPATH = "classpath:";
    private static final long PAGE = 4096;
    /** A warm-up slower than this is not worth waiting for: the backend fails to load with the reason. */
    private static final long WARMUP_TIMEOUT_SECONDS = 600;

    private final String backendId;
    private final KtNativeSettings settings;

    ModelLoader(String backendId, KtNativeSettings settings) {
        this.backendId = backendId;
        this.settings = settings;
    }

    /** The model file, resolved once (a classpath model is copied out once). */
    private Path resolved;

    private synchronized Path path() {
        if (resolved == null) {
            resolved = resolve(settings.model());
        }
        return resolved;
    }

    /** What the model file needs ({@link ModelNeeds}), from its header alone. */
    ModelNeeds needs() {
        return ModelNeeds.of(path());
    }

    LoadedModel load(DoubleConsumer progress) {
        Path path = path();
        GgufFile file = GgufFile.open(path);
        Parallel parallel = null;
        DeviceTier gpu = null;
        ExpertPlacement placement = null;
        try {
            pageIn(file, progress);
            parallel = Parallel.ofThreads(settings.threads());
            Model model = Model.load(file, parallel, settings.kernels(), settings.attention());
            checkCacheTypes(model);
            // a dense model needs the GPU only for the layer path; a MoE model also for its expert tier
            boolean wantsGpu = !model.expertLayers().isEmpty() || settings.placement().gpuLayers();
            gpu = wantsGpu ? GpuTiers.open(settings.placement()).orElse(null) : null;
            placement = ExpertPlacement.install(model, settings.modelName(), settings.placement(), gpu);
            boolean layersOnGpu = GpuTiers.installLayers(model, file, settings.placement(), placement, gpu,
                    settings.maxSequences()).isPresent();
            Tokenizer tokenizer = Tokenizers.fromMetadata(file.metadata());
            ChatTemplate template = ChatTemplate.fromMetadata(file.metadata(), tokenizer);
            int trained = model.config().contextLength();
            int context = settings.contextSize() == 0 ? trained : settings.contextSize();
            EngineOptions defaults = EngineOptions.defaults(context, settings.maxSequences());
            InferenceEngine engine = new InferenceEngine(model, new EngineOptions(context, settings.maxSequences(),
                    settings.maxQueued(), defaults.maxBatchTokens(), defaults.prefixCacheEntries(),
                    settings.cacheTypes()), parallel, drafter(model, tokenizer, parallel, context, layersOnGpu));
            warmUp(model, engine, placement);
            LOG.log(Level.INFO, "kt-native backend {0}: {1} ready ({2}, context {3}, {4} threads, {5})",
                    backendId, settings.modelName(), model.config().architecture().ggufName(), context,
                    settings.threads(), settings.attention());
            return new LoadedModel(file, parallel, engine, tokenizer, template,
                    facts(file, model, gpu, placement, layersOnGpu ? AttentionOrder.NON_FLASH : settings.attention(),
                            settings.cacheTypes()), placement, gpu);
        } catch (RuntimeException | Error e) {
            if (placement != null) {
                placement.close();
            }
            if (gpu != null) {
                gpu.close();
            }
            if (parallel != null) {
                parallel.close();
            }
            file.close();
            throw e;
        }
    }

    /** The {@code spec-type}'s drafter, or null (none); a draft model is loaded here, on the main model's threads. */
    private Drafter drafter(Model model, Tokenizer tokenizer, Parallel parallel, int context, boolean layersOnGpu) {
        SpeculativeSettings spec = settings.speculative();
        return switch (spec.type()) {
            case NONE -> null;
            case DRAFT_MTP -> {
                if (model.mtp() == null) {
                    throw new BackendConfigException(backendId, "spec-type", "setting 'spec-type: draft-mtp' needs a "
                            + "model with NextN (MTP) layers; this " + model.config().architecture().ggufName()
                            + " GGUF has none");
                }
                if (layersOnGpu) {
                    // the GPU layer path returns no hidden states, which the NextN block pairs every token with
                    throw new BackendConfigException(backendId, "spec-type", "setting 'spec-type: draft-mtp' runs "
                            + "with the layers on the CPU only (gpu-layers is on)");
                }
                LOG.log(Level.INFO, "kt-native backend {0}: the NextN block {1} drafts up to {2} tokens", backendId,
                        model.mtp().index(), spec.draftMax());
                yield new MtpDrafter(model.mtp(), context, new DraftLength(spec.draftMax(), spec.draftMin()));
            }
            case NGRAM_SIMPLE -> new NgramDrafter(spec.ngramSizeN(), spec.ngramSizeM(), spec.draftMin());
            case DRAFT_SIMPLE -> {
                GgufFile file = GgufFile.open(spec.draftModel());
                try {
                    Model draft = Model.load(file, parallel, settings.kernels(), settings.attention());
                    checkDraftVocabulary(tokenizer, Tokenizers.fromMetadata(file.metadata()));
                    LOG.log(Level.INFO, "kt-native backend {0}: draft model {1} ({2}) drafts up to {3} tokens",
                            backendId, spec.draftModel().getFileName(), draft.config().architecture().ggufName(),
                            spec.draftMax());
                    yield new ModelDrafter(draft, context, settings.cacheTypes(), new DraftLength(spec.draftMax(), spec.draftMin()),
                            file);
                } catch (RuntimeException | Error e) {
                    file.close();
                    if (e instanceof IllegalArgumentException) {
                        throw new BackendConfigException(backendId, "spec-draft-model", e.getMessage());
                    }
                    throw e;
                }
            }
        };
    }

    /** A draft model's tokens must be the main model's, id for id: its proposals are the main model's token ids. */
    private static void checkDraftVocabulary(Tokenizer main, Tokenizer draft) {
        if (main.vocabSize() != draft.vocabSize()) {
            throw new IllegalArgumentException("the draft model's vocabulary has " + draft.vocabSize()
                    + " tokens, the model's " + main.vocabSize() + ": they must be the same vocabulary");
        }
        for (int id = 0; id < main.vocabSize(); id++) {
            if (!main.piece(id).equals(draft.piece(id))) {
                throw new IllegalArgumentException("the draft model's token " + id + " is '" + draft.piece(id)
                        + "', the model's '" + main.piece(id) + "': they must be the same vocabulary");
            }
        }
    }

    /**
     * Refuses at load, with llama.cpp's reason, a KV cache type this model or path cannot hold: a block size that does
     * not divide a head, a quantised V without flash attention, any type but F16 on the GPU layer path (its device
     * cache and kernels are F16 only).
     */
    private void checkCacheTypes(Model model) {
        KvCacheTypes types = settings.cacheTypes();
        try {
            model.checkCacheTypes(types, settings.attention().flash());
        } catch (IllegalArgumentException e) {
            throw new BackendConfigException(backendId, e.getMessage().startsWith("K ") ? "cache-type-k" : "cache-type-v",
                    e.getMessage());
        }
        if (settings.placement().gpuLayers() && !types.equals(KvCacheTypes.F16)) {
            throw new BackendConfigException(backendId, "cache-type-k", "gpu-layers: on keeps an F16 KV cache on the "
                    + "device; cache types other than f16 (here " + types + ") run on the CPU only (gpu-layers: off)");
        }
    }

    /** {@link JitWarmup} when asked for, then the routing it caused forgotten: it was no traffic. */
    private void warmUp(Model model, InferenceEngine engine, ExpertPlacement placement) {
        if (settings.warmupTokens() == 0) {
            return;
        }
        long start = System.nanoTime();
        int generated = JitWarmup.run(engine, model.vocabSize(), settings.warmupTokens(), WARMUP_TIMEOUT_SECONDS);
        if (placement != null) {
            placement.forgetTraffic();
        } else if (model.routingStats() != null) {
            model.routingStats().forgetLive();
        }
        LOG.log(Level.INFO, "kt-native backend {0}: warm-up generated {1} tokens in {2} ms", backendId, generated,
                String.valueOf((System.nanoTime() - start) / 1_000_000));
    }

    /**
     * The bytes of a configured model without opening it: every part of a split GGUF, or the
     * classpath resource's length; empty when the file is missing (loading then says why).
     */
    static OptionalLong bytesOf(String model) {
        if (!model.startsWith(CLASSPATH)) {
            return ModelFiles.sizeOf(Path.of(model));
        }
        URL resource = Thread.currentThread().getContextClassLoader()
                .getResource(model.substring(CLASSPATH.length()).replaceFirst("^/", ""));
        if (resource == null) {
            return OptionalLong.empty();
        }
        try {
            long length = resource.openConnection().getContentLengthLong();
            return length > 0 ? OptionalLong.of(length) : OptionalLong.empty();
        } catch (IOException e) {
            return OptionalLong.empty();
        }
    }

    private Path resolve(String model) {
        if (!model.startsWith(CLASSPATH)) {
            Path path = Path.of(model);
            if (!Files.isRegularFile(path)) {
                throw new BackendConfigException(backendId, "model", "model file " + path + " does not exist");
            }
            return path;
        }
        String resource = model.substring(CLASSPATH.length()).replaceFirst("^/", "");
        try (InputStream in = Thread.currentThread().getContextClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new BackendConfigException(backendId, "model", "classpath resource " + resource + " not found");
            }
            Path temp = Files.createTempFile("lazarus-model-", ".gguf");
            temp.toFile().deleteOnExit();
            Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
            return temp;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy " + resource + " out of the classpath", e);
        }
    }

    /** Touches one byte per page of every tensor, logging each 10 % of the bytes. */
    private void pageIn(GgufFile file, DoubleConsumer progress) {
        long total = file.tensors().stream().mapToLong(GgufTensorInfo::byteSize).sum();
        long done = 0;
        int reported = 0;
        byte sink = 0;
        for (GgufTensorInfo t : file.tensors()) {
            MemorySegment data = file.data(t);
            for (long at = 0; at < data.byteSize(); at += PAGE) {
                sink ^= data.get(ValueLayout.JAVA_BYTE, at);
            }
            done += t.byteSize();
            double fraction = total == 0 ? 1 : (double) done / total;
            progress.accept(fraction);
            if ((int) (fraction * 10) > reported) {
                reported = (int) (fraction * 10);
                LOG.log(Level.INFO, "kt-native backend {0}: loaded {1} of {2} MiB ({3} %)", backendId,
                        done >> 20, total >> 20, reported * 10);
            }
        }
        if (sink == 42) {
            LOG.log(Level.TRACE, "page-in checksum {0}", sink); // keeps the reads from being optimised away
        }
    }

    /** What {@code /v1/models} shows about the model, and where and how it runs (the gateway's start-up line). */
    private Map<String, Object> facts(GgufFile file, Model model, DeviceTier gpu, ExpertPlacement placement,
                                             AttentionOrder attention, KvCacheTypes cacheTypes) {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("architecture", model.config().architecture().ggufName());
        facts.put("quantization", dominantType(file).name());
        facts.put("trained_context_length", model.config().contextLength());
        // as a llamacpp backend names llama-server's (-ctk/-ctv): what the decision gate aligns before comparing the two
        facts.put("cache_type_k", cacheTypes.keys().settingName());
        facts.put("cache_type_v", cacheTypes.values().settingName());
        facts.put("kv_bytes_per_token", model.kvLayout().bytesPerPosition(cacheTypes));
        // with the context (the model's context length): what the cache may grow to, for the preflight's memory wall
        facts.put("max_sequences", settings.maxSequences());
        String name = file.string("general.name", "");
        facts.put("general_name", name);
        String description = file.string("general.description", "");
        boolean random = (name + " " + description).toLowerCase(Locale.ROOT).contains("synthetic")
                || file.metadata().containsKey("lazarus.random_weights");
        if (random) {
            facts.put("random_weights", true);
        }
        facts.put("device", gpu == null ? "cpu" : "cpu+gpu");
        if (gpu != null) {
            facts.put("gpu", gpu.describe());
        }
        facts.put("kernels", KernelUse.describe(file.tensors(), settings.kernels()));
        if (placement != null) {
            facts.put("cpu_experts", placement.cpuExperts()); // ram / mmap / ram+mmap / none, as placed at load
        }
        // as a llamacpp backend names llama-server's: what the decision gate aligns before comparing the two. The GPU
        // layer path computes the non-flash order's F32 attention whatever the setting says (its measured tolerance)
        facts.put("flash_attention", attention.flash() ? "on" : "off");
        if (attention.flash()) {
            facts.put("threads", attention.threads());
        }
        return facts;
    }

    /** The weight type holding the most bytes (what "Q4_K_M" files are mostly made of). */
    private static GgmlType dominantType(GgufFile file) {
        Map<GgmlType, Long> bytes = new EnumMap<>(GgmlType.class);
        for (GgufTensorInfo t : file.tensors()) {
            bytes.merge(t.type(), t.byteSize(), Long::sum);
        }
        return bytes.entrySet().stream().max(Comparator.comparingLong(Map.Entry::getValue)).orElseThrow().getKey();
    }
}
