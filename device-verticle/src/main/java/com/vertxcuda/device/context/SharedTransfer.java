package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;

/**
 * An upload or download of {@code handle}'s view whose bytes sit in the shared region at
 * {@code offset}: what crosses the link instead of the bytes themselves. One slot, one view: a
 * transfer larger than a slot is split by the one pump ({@code ChunkedTransfer}) before it comes here.
 * The request table lists it (it crosses as a region slice); process isolation sends it, reads it
 * in the device host, and gives it its wire type ({@code IsolationCodecs}).
 */
public record SharedTransfer(BufferHandle handle, long offset, long length, boolean toDevice) {
}
