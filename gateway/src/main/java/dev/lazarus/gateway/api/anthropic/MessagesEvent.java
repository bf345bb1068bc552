package dev.lazarus.gateway.api.anthropic;

import dev.lazarus.gateway.api.NamedEventWriter;
import java.util.Map;

/**
 * One event of a Messages stream: its name ({@code event:} line) and its data, whose {@code type} repeats the name
 * as Anthropic's events do.
 */
public record MessagesEvent(String name, Map<String, Object> data) implements NamedEventWriter.NamedEvent {}
