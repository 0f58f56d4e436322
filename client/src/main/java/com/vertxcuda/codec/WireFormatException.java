package com.vertxcuda.codec;

/** Bytes on the wire that do not decode to the message type they claim to be. */
public class WireFormatException extends IllegalArgumentException {

  public WireFormatException(String message) {
    super(message);
  }

  public WireFormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
