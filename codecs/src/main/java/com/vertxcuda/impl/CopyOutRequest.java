package com.vertxcuda.impl;

import com.vertxcuda.BufferHandle;

/**
 * The source side of a copy between two devices whose contexts share a process (in-process
 * isolation, one backend): sent to the source's device, where it takes its place in the order and
 * copies {@code source} straight into {@code target} (peer to peer on cuda) once the target's
 * {@link CopyInRequest} of the same {@code transfer} holds the target. Replied with the target when
 * the copy has finished on the source's stream.
 */
public record CopyOutRequest(BufferHandle source, BufferHandle target, long transfer) {
}
