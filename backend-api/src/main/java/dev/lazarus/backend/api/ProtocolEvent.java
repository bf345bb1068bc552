package dev.lazarus.backend.api;

/**
 * One server-sent event of a protocol's stream as its server wrote it: the {@code event:} name and the data (one
 * JSON object, UTF-8), passed on by the gateway as they are but for the answer's identity.
 */
public record ProtocolEvent(String name, byte[] data) {

    @Override
    public String toString() {
        return "ProtocolEvent[" + name + ", " + data.length + " bytes]";
    }
}
