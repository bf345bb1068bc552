package dev.lazarus.kt.chat;

import java.time.Clock;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.TextStyle;
import java.util.Locale;

/**
 * Global functions Hugging Face chat templates call. Jinjava binds functions to static methods,
 * so the clock of the render in progress is passed through a thread-local.
 */
public final class TemplateFunctions {

    private static final ThreadLocal<Clock> CLOCK = ThreadLocal.withInitial(Clock::systemDefaultZone);

    private TemplateFunctions() {}

    /** Thrown by the template itself ({@code raise_exception}): the conversation is not acceptable to it. */
    public static final class TemplateRaisedException extends RuntimeException {
        TemplateRaisedException(String message) {
            super(message);
        }
    }

    static void withClock(Clock clock, Runnable body) {
        Clock previous = CLOCK.get();
        CLOCK.set(clock);
        try {
            body.run();
        } finally {
            CLOCK.set(previous);
        }
    }

    public static String raiseException(String message) {
        throw new TemplateRaisedException(message);
    }

    /** Python's {@code datetime.now().strftime(format)} for the directives templates use. */
    public static String strftimeNow(String format) {
        return strftime(ZonedDateTime.now(CLOCK.get()), format);
    }

    static String strftime(ZonedDateTime t, String format) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                out.append(c);
                continue;
            }
            char d = format.charAt(++i);
            switch (d) {
                case 'd' -> out.append(String.format("%02d", t.getDayOfMonth()));
                case 'e' -> out.append(String.format("%2d", t.getDayOfMonth()));
                case 'm' -> out.append(String.format("%02d", t.getMonthValue()));
                case 'Y' -> out.append(t.getYear());
                case 'y' -> out.append(String.format("%02d", t.getYear() % 100));
                case 'b', 'h' -> out.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> out.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> out.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> out.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'H' -> out.append(String.format("%02d", t.getHour()));
                case 'I' -> out.append(String.format("%02d", (t.getHour() + 11) % 12 + 1));
                case 'p' -> out.append(t.getHour() < 12 ? "AM" : "PM");
                case 'M' -> out.append(String.format("%02d", t.getMinute()));
                case 'S' -> out.append(String.format("%02d", t.getSecond()));
                case 'j' -> out.append(String.format("%03d", t.getDayOfYear()));
                case 'F' -> out.append(t.format(DateTimeFormatter.ISO_LOCAL_DATE));
                case '%' -> out.append('%');
                default -> out.append('%').append(d);
            }
        }
        return out.toString();
    }
}
