package dev.lazarus.gateway.api;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResultProvider;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.Locale;
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
 * chunked encoding after its head was accepted is answered 400 the same way while no answer has
 * begun (the request is already in Spring's hands, which then sees a client that went away), and
 * only closed once one has. An error Reactor Netty answers itself with no body (a URL it cannot
 * decode: {@code %ZZ}, a NUL) gets the OpenAI body on its way out.
 *
 * <p>All of these are the client's fault: logged at DEBUG without a stack. Reactor Netty logged each
 * as a WARN ("Decoding failed"). Sits between the HTTP codec and Reactor Netty's own handler; every
 * other message passes through untouched.
 */
final class MalformedRequestHandler extends ChannelDuplexHandler {

    private static final String NAME = "lazarus.malformedRequest";
    private static final Logger log = LoggerFactory.getLogger(MalformedRequestHandler.class);

    /** The answers, made once for all connections. */
    private record Answers(byte[] uriTooLong, byte[] headersTooLarge, byte[] malformed, byte[] version,
            byte[] transferCoding, byte[] contentCoding, JsonMapper json) {}

    private final byte[] uriTooLong;
    private final byte[] headersTooLarge;
    private final byte[] malformed;
    private final byte[] version;
    private final byte[] transferCoding;
    private final byte[] contentCoding;
    private final JsonMapper json;
    /** A request of this connection was refused here: the rest of its input is dropped until the close. */
    private boolean refused;
    /** An answer has begun on this connection: too late for one of ours. */
    private boolean answering;

    private MalformedRequestHandler(Answers answers) {
        this.uriTooLong = answers.uriTooLong();
        this.headersTooLarge = answers.headersTooLarge();
        this.malformed = answers.malformed();
        this.version = answers.version();
        this.transferCoding = answers.transferCoding();
        this.contentCoding = answers.contentCoding();
        this.json = answers.json();
    }

    private static Answers answers(JsonMapper json) {
        return new Answers(json.writeValueAsBytes(new ApiError(HttpStatus.URI_TOO_LONG, "invalid_request_error",
                "uri_too_long", null, "The request URL is longer than this gateway accepts. Send inputs in the "
                        + "JSON body, not in the URL.").body()),
                json.writeValueAsBytes(new ApiError(HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                "invalid_request_error", "request_header_fields_too_large", null,
                "The request headers are larger than this gateway accepts.").body()),
                json.writeValueAsBytes(new ApiError(HttpStatus.BAD_REQUEST, "invalid_request_error",
                        "malformed_request", null, "The request is not valid HTTP/1.1.").body()),
                json.writeValueAsBytes(new ApiError(HttpStatus.HTTP_VERSION_NOT_SUPPORTED, "invalid_request_error",
                        "http_version_not_supported", null, "This gateway speaks HTTP/1.1 and HTTP/1.0.").body()),
                json.writeValueAsBytes(new ApiError(HttpStatus.NOT_IMPLEMENTED, "invalid_request_error",
                        "unsupported_transfer_encoding", null,
                        "The only Transfer-Encoding this gateway reads is 'chunked'.").body()),
                json.writeValueAsBytes(new ApiError(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "invalid_request_error",
                        "unsupported_content_encoding", null,
                        "This gateway reads request bodies without a Content-Encoding; send the JSON uncompressed.")
                        .body()), json);
    }

    /** Installs the handler on every HTTP/1.1 connection. */
    static NettyServerCustomizer customizer(JsonMapper json) {
        Answers answers = answers(json);
        return server -> server.doOnChannelInit((observer, channel, remote) -> {
            if (channel.pipeline().get(NettyPipeline.HttpTrafficHandler) != null) {
                channel.pipeline().addBefore(NettyPipeline.HttpTrafficHandler, NAME, new MalformedRequestHandler(answers));
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request && !request.decoderResult().isFailure() && !answering) {
            HttpResponseStatus unsupported = unsupported(request);
            if (unsupported != null) {
                log.debug("{}: refused a request from {}: {}", ctx.channel().id(), ctx.channel().remoteAddress(),
                        unsupported);
                ReferenceCountUtil.release(msg);
                refused = true;
                answerAndClose(ctx, unsupported, unsupported == HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED ? version
                        : unsupported == HttpResponseStatus.NOT_IMPLEMENTED ? transferCoding : contentCoding);
                return;
            }
        }
        if (!(msg instanceof DecoderResultProvider decoded) || !decoded.decoderResult().isFailure()) {
            ctx.fireChannelRead(msg);
            return;
        }
        Throwable cause = decoded.decoderResult().cause();
        log.debug("{}: malformed request from {}: {}", ctx.channel().id(), ctx.channel().remoteAddress(), cause.toString());
        ReferenceCountUtil.release(msg);
        if (!(msg instanceof HttpRequest) && answering) {
            // A broken body after an answer began: too late for one of our own.
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
        answerAndClose(ctx, status, body);
    }

    private void answerAndClose(ChannelHandlerContext ctx, HttpResponseStatus status, byte[] body) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(body));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        answering = true;
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    /**
     * What a request asks that this gateway does not do (strict rather than guessing): a version other than
     * HTTP/1.x (505), a transfer coding other than {@code chunked} alone (501: {@code gzip, chunked} would be
     * read as chunked and its gzip ignored), a request body with a content coding (415); null when none.
     */
    private static HttpResponseStatus unsupported(HttpRequest request) {
        if (request.protocolVersion().majorVersion() != 1 || request.protocolVersion().minorVersion() > 1) {
            return HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED;
        }
        for (String coding : request.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING)) {
            if (!coding.strip().equalsIgnoreCase("chunked")) {
                return HttpResponseStatus.NOT_IMPLEMENTED;
            }
        }
        for (String coding : request.headers().getAll(HttpHeaderNames.CONTENT_ENCODING)) {
            if (!coding.strip().equalsIgnoreCase("identity")) {
                return HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE;
            }
        }
        return null;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof HttpResponse response && response.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
            answering = true;
        }
        if (msg instanceof LastHttpContent) {
            answering = false;
        }
        if (msg instanceof FullHttpResponse full && full.status().code() >= 400 && !full.content().isReadable()
                && !full.headers().contains(HttpHeaderNames.CONTENT_TYPE)) {
            // Reactor Netty's own rejections (a URL it cannot decode: %ZZ, NUL) come with no body at all.
            msg = withOpenAiBody(full);
        }
        super.write(ctx, msg, promise);
    }

    private FullHttpResponse withOpenAiBody(FullHttpResponse empty) {
        HttpResponseStatus status = empty.status();
        byte[] body = status.code() == 400 ? malformed : json.writeValueAsBytes(new ApiError(
                HttpStatus.valueOf(status.code()), status.code() < 500 ? "invalid_request_error" : "server_error",
                status.reasonPhrase().toLowerCase(Locale.ROOT).replace(' ', '_'), null,
                "The request was refused: " + status.reasonPhrase() + ".").body());
        FullHttpResponse response = new DefaultFullHttpResponse(empty.protocolVersion(), status,
                Unpooled.wrappedBuffer(body), empty.headers().copy(), empty.trailingHeaders().copy());
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        empty.release();
        return response;
    }
}
