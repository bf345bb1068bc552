package dev.lazarus.kt.chat;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import dev.lazarus.backend.api.BackendErrorKind;
import dev.lazarus.backend.api.BackendException;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Tool;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import jinjava.javax.el.CompositeELResolver;

/**
 * A model's chat template ({@code tokenizer.chat_template}, Hugging Face Jinja) rendered with
 * Jinjava, set up the way {@code transformers} sets up Jinja: {@code trim_blocks} and
 * {@code lstrip_blocks}, loop controls, and the helpers templates call — {@code raise_exception},
 * {@code strftime_now}, {@code tojson} as {@code json.dumps}, Python string methods.
 * Thread-safe: one instance serves all requests.
 */
public final class ChatTemplate {

    /** Used when the GGUF has no template: ChatML, as llama.cpp falls back to. */
    static final String CHATML = """
            {%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}
            {%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}""";

    private final String source;
    private final String jinjaSource;
    private final String bosToken;
    private final String eosToken;
    private final Jinjava jinjava;
    private final Clock clock;
    private volatile ChatFormat format;

    private ChatTemplate(String source, String bosToken, String eosToken, Clock clock) {
        this.source = Objects.requireNonNull(source, "source");
        this.jinjaSource = JinjaCompat.rewrite(source);
        this.bosToken = bosToken == null ? "" : bosToken;
        this.eosToken = eosToken == null ? "" : eosToken;
        this.clock = clock;
        this.jinjava = newJinjava();
    }

    /** The template of a GGUF file, its BOS/EOS texts taken from the tokenizer; ChatML when the file has none. */
    public static ChatTemplate fromMetadata(Map<String, Object> metadata, Tokenizer tokenizer) {
        String source = metadata.get("tokenizer.chat_template") instanceof String s && !s.isBlank() ? s : CHATML;
        String bos = tokenizer.bos() >= 0 ? tokenizer.piece(tokenizer.bos()) : "";
        String eos = tokenizer.eos() >= 0 ? tokenizer.piece(tokenizer.eos()) : "";
        return new ChatTemplate(source, bos, eos, Clock.systemDefaultZone());
    }

    public static ChatTemplate of(String source, String bosToken, String eosToken) {
        return new ChatTemplate(source, bosToken, eosToken, Clock.systemDefaultZone());
    }

    /** The same template with another clock for {@code strftime_now} (tests, reproducible prompts). */
    public ChatTemplate withClock(Clock newClock) {
        return new ChatTemplate(source, bosToken, eosToken, newClock);
    }

    public String source() {
        return source;
    }

    /** How answers under this template are laid out (reasoning block, tool-call syntax); detected once. */
    public ChatFormat format() {
        ChatFormat f = format;
        if (f == null) {
            f = ChatFormat.detect(this);
            format = f;
        }
        return f;
    }

    public String bosToken() {
        return bosToken;
    }

    public String render(List<ChatMessage> messages, List<Tool> tools, boolean addGenerationPrompt) {
        return render(messages, tools, addGenerationPrompt, Map.of());
    }

    /**
     * @param extraContext further template variables, e.g. {@code enable_thinking} (chat_template_kwargs)
     * @throws BackendException invalid request when the template rejects the conversation
     *                          ({@code raise_exception}); internal error when it cannot be rendered
     */
    public String render(List<ChatMessage> messages, List<Tool> tools, boolean addGenerationPrompt,
            Map<String, Object> extraContext) {
        Map<String, Object> context = new HashMap<>(extraContext);
        context.put("messages", TemplateMessages.messages(messages));
        if (tools != null && !tools.isEmpty()) {
            context.put("tools", TemplateMessages.tools(tools));
        }
        context.put("add_generation_prompt", addGenerationPrompt);
        context.put("bos_token", bosToken);
        context.put("eos_token", eosToken);
        // Llama 3.1-3.3 print it as today's date ("26 Jul 2024" when unset); llama-server sets it so
        context.putIfAbsent("date_string", TemplateFunctions.strftime(java.time.ZonedDateTime.now(clock), "%d %b %Y"));
        RenderResult[] result = new RenderResult[1];
        TemplateFunctions.withClock(clock, () -> result[0] = jinjava.renderForResult(jinjaSource, context));
        failOnErrors(result[0]);
        return result[0].getOutput();
    }

    private static void failOnErrors(RenderResult result) {
        for (TemplateError error : result.getErrors()) {
            if (error.getSeverity() != TemplateError.ErrorType.FATAL) {
                continue;
            }
            String raised = raisedMessage(error.getException());
            if (raised != null) {
                throw BackendException.invalidRequest("the model's chat template rejected the conversation: " + raised,
                        "messages");
            }
            throw new BackendException(BackendErrorKind.INTERNAL, "chat template could not be rendered: "
                    + error.getMessage() + " (line " + error.getLineno() + ")");
        }
    }

    private static String raisedMessage(Throwable t) {
        for (Throwable cause = t; cause != null; cause = cause.getCause()) {
            if (cause instanceof TemplateFunctions.TemplateRaisedException raised) {
                return raised.getMessage();
            }
        }
        return null;
    }

    /** Jinjava's opt-ins to Jinja2 (Python) behaviour: HF templates are written against Jinja2. */
    private static final LegacyOverrides JINJA2_SEMANTICS = LegacyOverrides.newBuilder()
            .withUseTrimmingForNotesAndExpressions(true) // {{- x -}} trims like {%- -%}
            .withParseWhitespaceControlStrictly(true)
            .withUseNaturalOperatorPrecedence(true) // f(a=x|length - 1) is f(a=((x|length) - 1))
            .withEvaluateMapKeys(true)
            .withIterateOverMapKeys(true)
            .withKeepNullableLoopValues(true)
            .withHandleBackslashInQuotesOnly(true)
            .withDefaultKeepTrailingNewlineBehavior(true)
            .build();

    private static Jinjava newJinjava() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonStringMethods());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_WRITE);
        Jinjava jinjava = new Jinjava(JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
                .withElResolver(resolver)
                .withLegacyOverrides(JINJA2_SEMANTICS)
                .build());
        jinjava.registerFilter(new TojsonFilter());
        jinjava.registerFunction(new ELFunctionDefinition("", "raise_exception", TemplateFunctions.class,
                "raiseException", String.class));
        jinjava.registerFunction(new ELFunctionDefinition("", "strftime_now", TemplateFunctions.class,
                "strftimeNow", String.class));
        return jinjava;
    }
}
