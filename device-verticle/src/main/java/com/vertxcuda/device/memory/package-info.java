/**
 * Host memory for transfers: the JVM's pool of direct host buffers and the buffers lent over
 * device or pinned memory, with how each is returned. The SPI's host-buffer methods use it.
 */
package com.vertxcuda.device.memory;
