package dev.lazarus.kt.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.backend.api.openai.ChatCompletionChunk;
import dev.lazarus.backend.api.openai.ChatCompletionRequest;
import dev.lazarus.backend.api.openai.ChatMessage;
import dev.lazarus.backend.api.openai.Completion;
import dev.lazarus.backend.api.openai.CompletionAggregator;
import dev.lazarus.backend.api.openai.CompletionRequest;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The embedded default is a trained model (scripts/train-default-model): greedy decoding writes English words,
 * and a chat answer ends on the end-of-turn token the model learnt from ChatML turns, not on a limit.
 *
 * <p>"English words" is measured on two numbers of the text: the share of its characters that are ASCII letters
 * or spaces, and the share of its words that are among the 150 most frequent words of English ({@link #COMMON},
 * from the Brown corpus' frequency list; in running English prose they make up about half the words). Measured
 * with greedy decoding: the trained model's 32 tokens after "Once upon a time" 0.92 and 0.59 (", the latter, the
 * latter, and the latter, ..."), its answer to "Hello" 0.95 and 0.80 ("Hell, he had been a good deal of his
 * own."); the random-weight model it replaced 0.85 and 0.00 ("^? Franceame ?Qu?odelhenev modelput *?unction??name[iev",
 * with ? for replacement characters and control bytes) and 0.82 and 0.25 ("\\tomicLongion2 start?(); perModelvate{hes from
 * sm..."). The bounds, 0.88 and 0.35, lie between the two.
 */
class DefaultModelBehaviourTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    static final Set<String> COMMON = Set.copyOf(Arrays.asList(("the of and to a in that is was he for it with as his "
            + "on be at by i this had not are but from or have an they which one you were her all she there would their "
            + "we him been has when who will more no if out so said what up its about into than them can only other new "
            + "some could time these two may then do first any my now such like our over man me even most made after "
            + "also did many before must through back years where much your way well down should because each just "
            + "those people mr how too little state good very make world still own see men work long get here between "
            + "both life being under never day same another know while last might us great old year off come since "
            + "against go came right used take three").split(" ")));

    private static final Pattern WORD = Pattern.compile("[A-Za-z]+(?:'[A-Za-z]+)?");

    static KtNativeBackend backend;

    @BeforeAll
    static void start() throws Exception {
        backend = EmbeddedModel.start(Map.of());
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    @Test
    void greedyContinuationOfOnceUponATimeIsEnglishWords() {
        CompletionRequest request = JSON.readValue(
                "{\"model\": \"tiny\", \"prompt\": \"Once upon a time\", \"max_tokens\": 32, \"temperature\": 0}",
                CompletionRequest.class);
        CompletionAggregator aggregator = new CompletionAggregator();
        backend.completion(request).collectList().block(Duration.ofMinutes(1)).forEach(aggregator::add);
        Completion result = aggregator.result();
        String text = result.choices().getFirst().text();
        System.out.printf("Once upon a time -> %s%n", text);
        assertEnglish(text);
    }

    @Test
    void chatAnswerEndsOnTheEndOfTurnToken() {
        ChatCompletionRequest request = ChatCompletionRequest.builder().model("tiny")
                .messages(List.of(ChatMessage.user("Hello"))).maxTokens(64).temperature(0.0).build();
        List<ChatCompletionChunk> chunks = backend.chat(request).collectList().block(Duration.ofMinutes(1));
        String answer = EmbeddedModel.text(chunks);
        System.out.printf("Hello -> %s (%s)%n", answer, EmbeddedModel.finishReason(chunks));
        assertThat(EmbeddedModel.finishReason(chunks)).as("finish reason of '%s'", answer).isEqualTo("stop");
        assertThat(chunks.getLast().usage().completionTokens()).as("tokens of '%s'", answer).isLessThan(64);
        assertEnglish(answer);
    }

    /** Letters and spaces at least 88 % of the characters, common English words at least 35 % of at least 5 words. */
    static void assertEnglish(String text) {
        long lettersOrSpaces = text.chars().filter(c -> c == ' ' || (c < 128 && Character.isLetter(c))).count();
        double letterShare = text.isEmpty() ? 0 : lettersOrSpaces / (double) text.length();
        Matcher m = WORD.matcher(text);
        int words = 0;
        int common = 0;
        while (m.find()) {
            words++;
            if (COMMON.contains(m.group().toLowerCase(Locale.ROOT))) {
                common++;
            }
        }
        double commonShare = words == 0 ? 0 : common / (double) words;
        System.out.printf("  letters or spaces %.2f, common words %.2f of %d%n", letterShare, commonShare, words);
        assertThat(letterShare).as("share of letters and spaces in '%s'", text).isGreaterThanOrEqualTo(0.88);
        assertThat(words).as("words in '%s'", text).isGreaterThanOrEqualTo(5);
        assertThat(commonShare).as("share of common English words in '%s'", text).isGreaterThanOrEqualTo(0.35);
    }
}
