package dev.lazarus.gateway.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Every log event of the process while started, on the root logger, with the named loggers raised to DEBUG
 * meanwhile (their levels restored at {@link #stop()}): how the tests read what the gateway wrote.
 */
public final class CapturedLogs {

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Map<String, Level> levels = new HashMap<>();

    /** Starts capturing; {@code debug} names the loggers to raise to DEBUG. */
    public CapturedLogs start(List<String> debug) {
        LoggerContext context = context();
        appender.setContext(context);
        appender.start();
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(appender);
        for (String name : debug) {
            Logger logger = context.getLogger(name);
            levels.put(name, logger.getLevel());
            logger.setLevel(Level.DEBUG);
        }
        return this;
    }

    public void stop() {
        LoggerContext context = context();
        levels.forEach((name, level) -> context.getLogger(name).setLevel(level));
        levels.clear();
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(appender);
        appender.stop();
    }

    /** The events so far: AppenderBase appends under the appender's own lock, and other threads still log. */
    public List<ILoggingEvent> events() {
        synchronized (appender) {
            return List.copyOf(appender.list);
        }
    }

    private static LoggerContext context() {
        return (LoggerContext) LoggerFactory.getILoggerFactory();
    }
}
