package dev.lazarus.gateway.api;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
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
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.http.HttpStatus;
import reactor.netty.NettyPipeline;
import tools.jackson.databind.json.JsonMapper;

/**
 * Answers a request line or headers over Netty's limits ({@code server.netty.max-initial-line-length},
 * {@code server.max-http-request-header-size}) with an OpenAI error body. Netty's decoder rejects
 * such a request before Spring sees it, and Reactor Netty would answer 414/431 with an empty body
 * that an OpenAI client cannot read. Sits between the HTTP codec and Reactor Netty's own handler;
 * every other message passes through untouched.
 */
@ChannelHandler.Sharable
final class OversizedRequestHandler extends ChannelInboundHandlerAdapter {

    private static final String NAME = "lazarus.oversizedRequest";

    private final byte[] uriTooLong;
    private final byte[] headersTooLarge;

    OversizedRequestHandler(JsonMapper json) {
        this.uriTooLong = json.writeValueAsBytes(new ApiError(HttpStatus.URI_TOO_LONG, "invalid_request_error",
                "uri_too_long", null, "The request URL is longer than this gateway accepts. Send inputs in the "
                        + "JSON body, not in the URL.").body());
        this.headersTooLarge = json.writeValueAsBytes(new ApiError(HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                "invalid_request_error", "request_header_fields_too_large", null,
                "The request headers are larger than this gateway accepts.").body());
    }

    /** Installs the handler on every HTTP/1.1 connection. */
    static NettyServerCustomizer customizer(JsonMapper json) {
        OversizedRequestHandler handler = new OversizedRequestHandler(json);
        return server -> server.doOnChannelInit((observer, channel, remote) -> {
            if (channel.pipeline().get(NettyPipeline.HttpTrafficHandler) != null) {
                channel.pipeline().addBefore(NettyPipeline.HttpTrafficHandler, NAME, handler);
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && request.decoderResult().isFailure()
                && request.decoderResult().cause() instanceof TooLongFrameException tooLong) {
            byte[] body;
            HttpResponseStatus status;
            if (tooLong instanceof TooLongHttpLineException) {
                body = uriTooLong;
                status = HttpResponseStatus.REQUEST_URI_TOO_LONG;
            } else if (tooLong instanceof TooLongHttpHeaderException) {
                body = headersTooLarge;
                status = HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
            } else {
                ctx.fireChannelRead(msg);
                return;
            }
            ReferenceCountUtil.release(msg);
            // The decoder discards the rest of the connection's input: answer once and close.
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.wrappedBuffer(body));
            response.headers()
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.fireChannelRead(msg);
    }
}
