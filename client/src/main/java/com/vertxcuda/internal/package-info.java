/**
 * What the toolkit's other modules use of the client's implementation; not an API: no
 * compatibility promise.
 */
package com.vertxcuda.internal;
