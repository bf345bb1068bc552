package dev.lazarus.llamacpp.http;

import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import reactor.netty.Connection;

/**
 * Hands the body of an upstream answer on in the pieces its connection read, not one per HTTP chunk: a
 * server that writes each event as a chunk of its own (llama-server, nginx) would otherwise cost one
 * signal through the whole relay per event even where many came in one read. The chunks of one read are
 * gathered (without copying) until the read completes or the body ends, so nothing waits for more.
 */
final class ReadCoalescer extends ChannelInboundHandlerAdapter {

    static final String NAME = "lazarus.readCoalescer";

    private CompositeByteBuf pending;

    /** Puts one on {@code connection} unless it has one (a kept-alive connection keeps it between answers). */
    static void install(Connection connection) {
        if (connection.channel().pipeline().get(NAME) == null) {
            connection.addHandlerLast(NAME, new ReadCoalescer());
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof LastHttpContent) {
            flush(ctx);
            ctx.fireChannelRead(msg);
        } else if (msg instanceof HttpContent content) {
            if (pending == null) {
                pending = ctx.alloc().compositeBuffer(64);
            }
            pending.addComponent(true, content.content());
        } else {
            flush(ctx);
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flush(ctx);
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        flush(ctx);
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (pending != null) {
            pending.release();
            pending = null;
        }
    }

    private void flush(ChannelHandlerContext ctx) {
        if (pending != null) {
            CompositeByteBuf gathered = pending;
            pending = null;
            ctx.fireChannelRead(new DefaultHttpContent(gathered));
        }
    }
}
