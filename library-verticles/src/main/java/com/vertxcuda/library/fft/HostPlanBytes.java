package com.vertxcuda.library.fft;

import pl.edu.icm.jlargearrays.LargeArray;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The heap a JTransforms plan holds, measured from what it allocated: every array (twiddles, bit
 * reversal tables, Bluestein's chirp and its transform) reachable from the plan's own fields,
 * 1D plans inside 2D and 3D ones included, each counted once. JTransforms keeps no other state per
 * plan (its scratch is allocated per transform and dropped).
 */
final class HostPlanBytes {

  /** An array's header on a 64-bit JVM (mark, class, length), rounded up with its elements to 8 bytes. */
  private static final long ARRAY_HEADER = 16;

  private HostPlanBytes() {
  }

  static long of(Object plan) {
    return plan == null ? 0 : walk(plan, Collections.newSetFromMap(new IdentityHashMap<>()));
  }

  private static long walk(Object o, Set<Object> seen) {
    if (o == null || !seen.add(o)) {
      return 0;
    }
    Class<?> c = o.getClass();
    if (c.isArray()) {
      Class<?> element = c.getComponentType();
      if (element.isPrimitive()) {
        return align(ARRAY_HEADER + (long) Array.getLength(o) * primitiveSize(element));
      }
      long bytes = align(ARRAY_HEADER + 4L * Array.getLength(o));
      for (int i = 0; i < Array.getLength(o); i++) {
        bytes += walk(Array.get(o, i), seen);
      }
      return bytes;
    }
    if (o instanceof LargeArray) {
      // Java arrays up to 2^30 elements, off-heap memory above: length times element size either way.
      LargeArray a = (LargeArray) o;
      return align(ARRAY_HEADER + a.length() * a.getType().sizeOf());
    }
    if (o instanceof Enum || !c.getName().startsWith("org.jtransforms.")) {
      return 0; // enums and boxed constants: shared, not the plan's
    }
    long bytes = 0;
    for (Class<?> k = c; k != null && k.getName().startsWith("org.jtransforms."); k = k.getSuperclass()) {
      for (Field f : k.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
          continue;
        }
        try {
          f.setAccessible(true);
          bytes += walk(f.get(o), seen);
        } catch (ReflectiveOperationException | RuntimeException e) {
          throw new IllegalStateException("cannot measure the FFT plan's field " + f, e);
        }
      }
    }
    return bytes;
  }

  private static long primitiveSize(Class<?> t) {
    if (t == long.class || t == double.class) {
      return 8;
    }
    if (t == int.class || t == float.class) {
      return 4;
    }
    if (t == short.class || t == char.class) {
      return 2;
    }
    return 1;
  }

  private static long align(long bytes) {
    return (bytes + 7) & ~7L;
  }
}
