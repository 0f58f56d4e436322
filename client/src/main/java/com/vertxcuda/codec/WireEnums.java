package com.vertxcuda.codec;

import java.nio.charset.StandardCharsets;

/**
 * Enum constants on the wire, by name (stable across reorderings): each enum's names as UTF-8 bytes
 * made once, and a match of a name's bytes in place, with no string made. A name's first eight bytes
 * packed into a long are compared before any byte-by-byte match: a request reads a handful of enums
 * each time (six in a GEMM, one in each handle), so a range compare per candidate name would be the
 * largest cost of decoding a batch of GEMMs, as a per-value {@code ClassValue} lookup would be of
 * encoding one.
 */
final class WireEnums {

  private WireEnums() {
  }

  /** One enum type's constants and names, by ordinal (shared: never written to). */
  static final class Table {
    final Object[] constants;
    final byte[][] names;
    private final long[] keys;

    private Table(Class<?> type) {
      constants = type.getEnumConstants();
      names = new byte[constants.length][];
      keys = new long[constants.length];
      for (int i = 0; i < constants.length; i++) {
        names[i] = ((Enum<?>) constants[i]).name().getBytes(StandardCharsets.UTF_8);
        keys[i] = key(names[i], 0, names[i].length);
      }
    }

    /** The ordinal whose name is {@code len} bytes of {@code b} from {@code at}, or -1. */
    int find(byte[] b, int at, int len) {
      long key = key(b, at, len);
      for (int i = 0; i < keys.length; i++) {
        if (keys[i] == key && names[i].length == len && rest(names[i], b, at)) {
          return i;
        }
      }
      return -1;
    }

    // The bytes past the packed eight.
    private static boolean rest(byte[] name, byte[] b, int at) {
      for (int j = 8; j < name.length; j++) {
        if (name[j] != b[at + j]) {
          return false;
        }
      }
      return true;
    }

    // Up to eight bytes big-endian, the length in the top byte where fewer (names are ASCII in
    // practice; any bytes pack the same on both sides, and the full compare settles the rest).
    private static long key(byte[] b, int at, int len) {
      int k = Math.min(len, 8);
      long key = 0;
      for (int j = 0; j < k; j++) {
        key = (key << 8) | (b[at + j] & 0xff);
      }
      return k < 8 ? key | ((long) len << 56) : key;
    }
  }

  private static final ClassValue<Table> TABLES = new ClassValue<>() {
    @Override
    protected Table computeValue(Class<?> type) {
      return new Table(type);
    }
  };

  /**
   * The tables one reader or writer uses, kept beside it and found by identity: a message carries a
   * handful of enum types thousands of times, and the shared {@code ClassValue} lookup cost more than
   * the rest of writing the name. The first type is kept in a field: a message of one enum type (a
   * fill's handle names its dtype) makes no arrays.
   */
  static final class Cache {
    private Class<?> firstType;
    private Table firstTable;
    private Class<?>[] types;
    private Table[] tables;
    private int count;

    Table get(Class<?> cls) {
      if (cls == firstType) {
        return firstTable;
      }
      for (int i = 0; i < count; i++) {
        if (types[i] == cls) {
          return tables[i];
        }
      }
      Table t = TABLES.get(cls);
      if (firstType == null) {
        firstType = cls;
        firstTable = t;
      } else {
        if (types == null) {
          types = new Class<?>[11];
          tables = new Table[11];
        }
        if (count < types.length) {
          types[count] = cls;
          tables[count++] = t;
        }
      }
      return t;
    }
  }
}
