package com.vertxcuda.device.spi;

/**
 * A request whose body a device host could not read off its link (a list longer than its wire
 * format allows, say). It still takes its place in the submission order and reaches the handler
 * it was for, which answers BAD_REQUEST naming the reason; the device host keeps serving.
 */
public record UnreadableRequest(String reason) {
}
