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
 * gathered (without copying) until the read completes or the body ends, so nothing waits for more, or
 * until they make {@link #MAX_GATHERED} bytes: the consumer's demand then still stops the connection's read
 * loop (it reads on while auto-read is on), so a consumer that stopped asking holds at most about that much
 * of the upstream's body rather than all of a read loop's (up to 16 reads).
 */
final class ReadCoalescer extends ChannelInboundHandlerAdapter {

    static final String NAME = "lazarus.readCoalescer";
    static final int MAX_GATHERED = 64 * 1024;

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
            if (pending.readableBytes() >= MAX_GATHERED) {
                flush(ctx);
            }
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
