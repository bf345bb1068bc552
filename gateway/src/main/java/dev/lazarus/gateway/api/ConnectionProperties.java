package dev.lazarus.gateway.api;

import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * How long and how many client connections the gateway holds, under {@code lazarus.connections.*}.
 * A client that sends slowly or not at all must not hold a connection for ever (slowloris).
 *
 * @param headerTimeout a request line and headers must arrive whole this long after their first byte;
 *                      else 408 and close
 * @param bodyTimeout   longest pause within a request body; else 408 and close
 * @param idleTimeout   a connection waiting for its (next) request with no byte of it yet is closed
 *                      after this; a response being generated is never cut by these timeouts
 * @param max           concurrent connections in all; more get 503 and a close; 0: no limit
 * @param maxPerAddress concurrent connections from one client address; more get 503 and a close;
 *                      0: no limit. Behind a reverse proxy every client has the proxy's address
 * @param writeStallTimeout a client that takes none of a response's bytes for this long (the gateway's
 *                      write buffer for it stays full) is cut; its upstream call is cancelled, which
 *                      charges the backend nothing
 * @param writeBuffer   per connection, the response bytes the gateway buffers for a client that reads slower
 *                      than the upstream writes; past it, nothing more is read from the upstream until the
 *                      client takes some (the connection's high-water mark; it resumes at half)
 * @param stalledBytesMax in all, the response bytes held for stalled clients (unwritable connections); a
 *                      connection that stalls while they exceed it is cut at once rather than after the stall
 * @param sendBuffer    per connection, the kernel's send buffer ({@code SO_SNDBUF}); 0 leaves it to the OS, whose
 *                      autotuning lets it grow to megabytes (Linux: {@code net.ipv4.tcp_wmem}). What a client that
 *                      stopped reading was sent is relayed all the same, and what is relayed of a stream is kept
 *                      for a mid-stream resume: with an unbounded send buffer that is megabytes per stalled client
 */
@Validated
@ConfigurationProperties(prefix = "lazarus.connections")
public record ConnectionProperties(
        @DefaultValue("10s") @NotNull Duration headerTimeout,
        @DefaultValue("30s") @NotNull Duration bodyTimeout,
        @DefaultValue("60s") @NotNull Duration idleTimeout,
        @DefaultValue("4096") @Min(0) int max,
        @DefaultValue("256") @Min(0) int maxPerAddress,
        @DefaultValue("30s") @NotNull Duration writeStallTimeout,
        @DefaultValue("64KB") @NotNull DataSize writeBuffer,
        @DefaultValue("64MB") @NotNull DataSize stalledBytesMax,
        @DefaultValue("64KB") @NotNull DataSize sendBuffer) {}
