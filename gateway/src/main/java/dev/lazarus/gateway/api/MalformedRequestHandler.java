package dev.lazarus.gateway.api;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResultProvider;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.http.HttpStatus;
import reactor.netty.NettyPipeline;
import tools.jackson.databind.json.JsonMapper;

/**
 * Answers what Netty's HTTP decoder could not read, before Spring sees it: a request line or
 * headers over Netty's limits ({@code server.netty.max-initial-line-length},
 * {@code server.max-http-request-header-size}) with 414/431, any other malformed request head (a
 * bad Content-Length, a bad version) with 400, each with an OpenAI error body and a close; Reactor
 * Netty would answer with an empty body that an OpenAI client cannot read. A body that breaks the
 * chunked encoding after its head was accepted closes the connection (the request is already in
 * Spring's hands, which then sees a client that went away).
 *
 * <p>All of these are the client's fault: logged at DEBUG without a stack. Reactor Netty logged each
 * as a WARN ("Decoding failed"). Sits between the HTTP codec and Reactor Netty's own handler; every
 * other message passes through untouched.
 */
@ChannelHandler.Sharable
final class MalformedRequestHandler extends ChannelInboundHandlerAdapter {

    private static final String NAME = "lazarus.malformedRequest";
    private static final Logger log = LoggerFactory.getLogger(MalformedRequestHandler.class);

    private final byte[] uriTooLong;
    private final byte[] headersTooLarge;
    private final byte[] malformed;

    MalformedRequestHandler(JsonMapper json) {
        this.uriTooLong = json.writeValueAsBytes(new ApiError(HttpStatus.URI_TOO_LONG, "invalid_request_error",
                "uri_too_long", null, "The request URL is longer than this gateway accepts. Send inputs in the "
                        + "JSON body, not in the URL.").body());
        this.headersTooLarge = json.writeValueAsBytes(new ApiError(HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                "invalid_request_error", "request_header_fields_too_large", null,
                "The request headers are larger than this gateway accepts.").body());
        this.malformed = json.writeValueAsBytes(new ApiError(HttpStatus.BAD_REQUEST, "invalid_request_error",
                "malformed_request", null, "The request is not valid HTTP/1.1.").body());
    }

    /** Installs the handler on every HTTP/1.1 connection. */
    static NettyServerCustomizer customizer(JsonMapper json) {
        MalformedRequestHandler handler = new MalformedRequestHandler(json);
        return server -> server.doOnChannelInit((observer, channel, remote) -> {
            if (channel.pipeline().get(NettyPipeline.HttpTrafficHandler) != null) {
                channel.pipeline().addBefore(NettyPipeline.HttpTrafficHandler, NAME, handler);
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof DecoderResultProvider decoded) || !decoded.decoderResult().isFailure()) {
            ctx.fireChannelRead(msg);
            return;
        }
        Throwable cause = decoded.decoderResult().cause();
        log.debug("{}: malformed request from {}: {}", ctx.channel().id(), ctx.channel().remoteAddress(), cause.toString());
        ReferenceCountUtil.release(msg);
        if (!(msg instanceof HttpRequest)) {
            // A broken body after an accepted head: too late for an answer of our own.
            ctx.close();
            return;
        }
        byte[] body = malformed;
        HttpResponseStatus status = HttpResponseStatus.BAD_REQUEST;
        if (cause instanceof TooLongHttpLineException) {
            body = uriTooLong;
            status = HttpResponseStatus.REQUEST_URI_TOO_LONG;
        } else if (cause instanceof TooLongHttpHeaderException) {
            body = headersTooLarge;
            status = HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
        }
        // The decoder discards the rest of the connection's input: answer once and close.
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(body));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
