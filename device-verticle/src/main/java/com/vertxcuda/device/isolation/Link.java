package com.vertxcuda.device.isolation;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.parsetools.RecordParser;

/** Frames over one socket between a device verticle and its device host. */
final class Link {

  private final NetSocket socket;

  Link(NetSocket socket, Handler<LinkFrame> frames, Handler<Throwable> malformed) {
    this.socket = socket;
    RecordParser parser = RecordParser.newFixed(4);
    parser.handler(new Handler<>() {
      int length = -1;

      @Override
      public void handle(Buffer chunk) {
        if (length < 0) {
          length = chunk.getInt(0);
          parser.fixedSizeMode(length);
          return;
        }
        length = -1;
        parser.fixedSizeMode(4);
        LinkFrame frame;
        try {
          frame = LinkFrame.decode(chunk);
        } catch (RuntimeException e) {
          malformed.handle(e);
          return;
        }
        frames.handle(frame);
      }
    });
    socket.handler(parser);
  }

  void send(LinkFrame frame) {
    socket.write(frame.encode());
  }

  void closeHandler(Handler<Void> handler) {
    socket.closeHandler(handler);
  }

  void close() {
    socket.close();
  }
}
