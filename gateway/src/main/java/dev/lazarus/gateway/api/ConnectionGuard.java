package dev.lazarus.gateway.api;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.http.HttpStatus;
import reactor.netty.NettyPipeline;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keeps slow and silent clients from holding connections (slowloris): one guard per HTTP/1.1
 * connection, with a deadline for each phase of a request. Reactor Netty's own idle timeout restarts
 * on every byte, so a client sending a header byte every few seconds would never meet it.
 *
 * <ul>
 * <li>waiting for a request, no byte yet: closed after {@code idle-timeout};
 * <li>request head begun: it must be whole within {@code header-timeout}, else 408 and close;
 * <li>request body: no pause longer than {@code body-timeout}, else 408 (if nothing was answered yet)
 *     and close;
 * <li>request read, response under way: no deadline here (generation takes what it takes; the
 *     routing timeouts govern it), except that a client that stops taking the response's bytes is cut
 *     once the connection has been unwritable (its write buffer over the high-water mark) for
 *     {@code write-stall-timeout}. Nothing more is read from the upstream meanwhile (the response's
 *     writer asks for events only while the connection is writable), so the stall costs no memory
 *     beyond that buffer and the kernel's send buffer, which {@code send-buffer} keeps small (what was
 *     relayed is also kept for a mid-stream resume); the close cancels the upstream call, which charges
 *     the backend nothing.
 * </ul>
 *
 * Also caps connections in all and per client address ({@link ConnectionCount}): one over a cap is
 * answered 503 before its request is read, and closed. Two handlers share the guard: {@link Bytes}
 * ahead of the HTTP codec sees the first raw byte of a request and writes these answers as raw bytes;
 * {@link Messages} behind it sees where requests and responses begin and end.
 */
final class ConnectionGuard {

    private static final Logger log = LoggerFactory.getLogger(ConnectionGuard.class);

    /** The name of the handler behind the codec, which also tells a {@link WriteGate} of writability. */
    static final String MESSAGES = "lazarus.connectionMessages";

    private enum Phase { IDLE, HEAD, BODY, RESPONDING }

    /** What every guard shares: the settings, the counts and the prepared answers. */
    record Settings(ConnectionProperties limits, ConnectionCount count, AtomicLong stalledBytes, byte[] timeout,
            byte[] overloaded) {

        static Settings of(ConnectionProperties limits, JsonMapper json) {
            return new Settings(limits, new ConnectionCount(limits.max(), limits.maxPerAddress()), new AtomicLong(),
                    answer(json, HttpStatus.REQUEST_TIMEOUT, "request_timeout",
                            "The request was not received in time; send it again without pausing.", ""),
                    answer(json, HttpStatus.SERVICE_UNAVAILABLE, "too_many_connections",
                            "This gateway has too many open connections; retry shortly.", "Retry-After: 1\r\n"));
        }

        private static byte[] answer(JsonMapper json, HttpStatus status, String code, String message, String extra) {
            byte[] body = json.writeValueAsBytes(new ApiError(status, "invalid_request_error", code, null, message).body());
            String head = "HTTP/1.1 " + status.value() + " " + status.getReasonPhrase() + "\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n"
                    + extra + "Connection: close\r\n\r\n";
            byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
            byte[] all = new byte[headBytes.length + body.length];
            System.arraycopy(headBytes, 0, all, 0, headBytes.length);
            System.arraycopy(body, 0, all, headBytes.length, body.length);
            return all;
        }
    }

    /** Installs a guard on every HTTP/1.1 connection. */
    static NettyServerCustomizer customizer(Settings settings) {
        return server -> server.doOnChannelInit((observer, channel, remote) -> {
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null
                    && channel.pipeline().get(NettyPipeline.HttpTrafficHandler) != null) {
                int high = (int) Math.min(Integer.MAX_VALUE, Math.max(2, settings.limits().writeBuffer().toBytes()));
                channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(high / 2, high));
                long send = settings.limits().sendBuffer().toBytes();
                if (send > 0) {
                    channel.config().setOption(ChannelOption.SO_SNDBUF, (int) Math.min(Integer.MAX_VALUE, send));
                }
                ConnectionGuard guard = new ConnectionGuard(settings);
                channel.pipeline().addBefore(NettyPipeline.HttpCodec, "lazarus.connectionBytes", guard.bytes);
                channel.pipeline().addBefore(NettyPipeline.HttpTrafficHandler, MESSAGES,
                        guard.messages);
            }
        });
    }

    private final Settings settings;
    private final Bytes bytes = new Bytes();
    private final Messages messages = new Messages();
    private Phase phase = Phase.IDLE;
    private int unanswered;
    private boolean answering;
    private InetAddress counted;
    private ScheduledFuture<?> deadline;
    private long deadlineAt = NO_DEADLINE;
    /** The response is under way and the client takes none of it: the write-stall deadline runs. */
    private boolean stalled;
    /** What this connection adds to the stalled bytes of all while it is stalled. */
    private long stalledBytes;
    private final long shortest;

    private static final long NO_DEADLINE = Long.MIN_VALUE;

    /**
     * Reactor Netty's writer hands the connection at most 128 messages not yet sent, and queues the rest
     * itself, where the connection's writability does not see them: a stream of small events (a Messages
     * {@code text_delta} is ~300 bytes) would keep the connection writable under its byte mark while the
     * writer's queue grew, and the stalled client would never be cut. So the connection also counts as
     * unwritable while this many messages wait to be sent, until half of them went.
     */
    static final int UNSENT_HIGH = 64;
    private static final int UNSENT_LOW = UNSENT_HIGH / 2;
    /** The index of the unsent-messages flag among the connection's user-defined writability flags. */
    private static final int UNSENT_FLAG = 1;
    private int unsent;

    private ConnectionGuard(Settings settings) {
        this.settings = settings;
        ConnectionProperties limits = settings.limits();
        this.shortest = Math.max(1, Math.min(Math.min(limits.headerTimeout().toNanos(), limits.writeStallTimeout().toNanos()),
                Math.min(limits.bodyTimeout().toNanos(), limits.idleTimeout().toNanos())));
    }

    /**
     * Enters a phase and moves its deadline; all on the channel's event loop. One timer task per connection
     * rather than one per phase: a task scheduled at most the shortest limit ahead fires before any deadline
     * set later, so a new deadline is only a field written; the task, when it fires early, waits for the rest
     * (scheduling and cancelling a task at each phase of every request was measurable on the relay path).
     */
    private void enter(Phase next) {
        phase = next;
        unstall();
        Duration limit = switch (next) {
            case IDLE -> settings.limits().idleTimeout();
            case HEAD -> settings.limits().headerTimeout();
            case BODY -> settings.limits().bodyTimeout();
            case RESPONDING -> null;
        };
        if (limit == null) {
            deadlineAt = NO_DEADLINE;
            return;
        }
        startDeadline(limit);
    }

    private void startDeadline(Duration limit) {
        deadlineAt = System.nanoTime() + limit.toNanos();
        if (deadline == null && bytes.ctx != null) {
            schedule(limit.toNanos());
        }
    }

    /** The connection's writability changed while a response is under way: the write-stall deadline starts or ends. */
    private void writability(boolean writable) {
        if (phase != Phase.RESPONDING) {
            return;
        }
        if (!writable && !stalled) {
            stalled = true;
            stalledBytes = bytes.ctx.channel().unsafe().outboundBuffer() == null ? 0
                    : bytes.ctx.channel().unsafe().outboundBuffer().totalPendingWriteBytes();
            long all = settings.stalledBytes().addAndGet(stalledBytes);
            if (all > settings.limits().stalledBytesMax().toBytes()) {
                log.info("{}: closed, the client at {} stopped reading while stalled clients hold {} bytes",
                        bytes.ctx.channel().id(), bytes.ctx.channel().remoteAddress(), all);
                bytes.ctx.close();
                return;
            }
            startDeadline(settings.limits().writeStallTimeout());
        } else if (writable && stalled) {
            unstall();
            deadlineAt = NO_DEADLINE;
        }
    }

    private void unstall() {
        if (stalled) {
            stalled = false;
            settings.stalledBytes().addAndGet(-stalledBytes);
            stalledBytes = 0;
        }
    }

    private void schedule(long inNanos) {
        deadline = bytes.ctx.executor().schedule(this::check, Math.min(inNanos, shortest), TimeUnit.NANOSECONDS);
    }

    /** The timer task: the phase's deadline passed, or wait for it (no deadline: stop until the next phase). */
    private void check() {
        deadline = null;
        if (deadlineAt == NO_DEADLINE || !bytes.ctx.channel().isActive()) {
            return;
        }
        long left = deadlineAt - System.nanoTime();
        if (left > 0) {
            schedule(left);
        } else {
            expire(phase);
        }
    }

    private void expire(Phase expired) {
        if (stalled) {
            log.info("{}: closed, the client at {} took none of its response for {}", bytes.ctx.channel().id(),
                    bytes.ctx.channel().remoteAddress(), settings.limits().writeStallTimeout());
            bytes.ctx.close();
            return;
        }
        log.debug("{}: closed, {} from {} took too long", bytes.ctx.channel().id(), expired,
                bytes.ctx.channel().remoteAddress());
        if (expired == Phase.IDLE || answering) {
            // Nothing asked, or an answer already begun: a close is all HTTP allows.
            bytes.ctx.close();
        } else {
            bytes.answerAndClose(settings.timeout());
        }
    }

    /** Ahead of the codec: raw bytes in, raw answers out. */
    private final class Bytes extends ChannelInboundHandlerAdapter {

        private ChannelHandlerContext ctx;
        private boolean rejected;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            InetAddress address = ctx.channel().remoteAddress() instanceof InetSocketAddress socket
                    ? socket.getAddress() : null;
            if (address != null && !settings.count().tryAcquire(address)) {
                rejected = true;
                log.debug("{}: refused, too many connections (from {})", ctx.channel().id(), address);
                answerAndClose(settings.overloaded());
                return;
            }
            counted = address;
            enter(Phase.IDLE);
            super.channelActive(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (counted != null) {
                settings.count().release(counted);
                counted = null;
            }
            unstall();
            if (deadline != null) {
                deadline.cancel(false);
            }
            super.channelInactive(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (rejected) {
                ReferenceCountUtil.release(msg);
                return;
            }
            if (phase == Phase.IDLE && msg instanceof ByteBuf buf && buf.isReadable()) {
                enter(Phase.HEAD);
            }
            ctx.fireChannelRead(msg);
        }

        void answerAndClose(byte[] answer) {
            ctx.writeAndFlush(Unpooled.wrappedBuffer(answer)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** Behind the codec: where requests and responses begin and end. */
    private final class Messages extends ChannelDuplexHandler {

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
            boolean writable = ctx.channel().isWritable();
            writability(writable);
            Runnable gate = writable ? ctx.channel().attr(WriteGate.ON_WRITABLE).get() : null;
            if (gate != null) {
                gate.run();
            }
            super.channelWritabilityChanged(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if (msg instanceof HttpRequest) {
                unanswered++;
                enter(Phase.BODY);
            }
            if (msg instanceof LastHttpContent) {
                // Answered before its body was read (413 on Content-Length): waiting for the next request.
                enter(unanswered > 0 ? Phase.RESPONDING : Phase.IDLE);
            } else if (msg instanceof HttpContent && phase == Phase.BODY) {
                enter(Phase.BODY);
            }
            super.channelRead(ctx, msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            if (msg instanceof HttpResponse response && response.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                // 100 Continue is not the answer.
                super.write(ctx, msg, promise);
                return;
            }
            if (msg instanceof HttpResponse) {
                answering = true;
            }
            if (msg instanceof LastHttpContent) {
                answering = false;
                if (--unanswered <= 0) {
                    unanswered = 0;
                    enter(Phase.IDLE);
                }
            }
            // a response's body goes out as ByteBufs (Reactor Netty's writer) or as HttpContents
            if ((msg instanceof ByteBuf || msg instanceof HttpContent) && !promise.isVoid()) {
                super.write(ctx, msg, counted(ctx, promise));
                return;
            }
            super.write(ctx, msg, promise);
        }

        /**
         * A promise for one message, kept among the unsent until it went, then passed on to the writer's own (which
         * takes no other listener).
         */
        private ChannelPromise counted(ChannelHandlerContext ctx, ChannelPromise promise) {
            if (++unsent == UNSENT_HIGH) {
                unsentWritability(ctx, false);
            }
            ChannelPromise counted = ctx.newPromise();
            counted.addListener(sent -> {
                if (--unsent == UNSENT_LOW) {
                    unsentWritability(ctx, true);
                }
                if (sent.isSuccess()) {
                    promise.trySuccess();
                } else {
                    promise.tryFailure(sent.cause());
                }
            });
            return counted;
        }

        private static void unsentWritability(ChannelHandlerContext ctx, boolean writable) {
            ChannelOutboundBuffer outbound = ctx.channel().unsafe().outboundBuffer();
            if (outbound != null) {
                outbound.setUserDefinedWritability(UNSENT_FLAG, writable);
            }
        }
    }
}
