package com.vertxcuda.impl;

import com.vertxcuda.BufferHandle;
import io.vertx.core.buffer.Buffer;

/**
 * Bytes of a copy between devices for {@code view}, a range of its {@link CopyInRequest}'s target,
 * served outside the order (the copy holds its place). {@code data} null aborts the copy: its
 * target's place is given up and the copy fails. Replied with the view once written.
 */
public record CopyInChunk(BufferHandle view, long transfer, Buffer data) {
}
