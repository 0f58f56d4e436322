package com.vertxcuda.codec.impl;

import com.vertxcuda.DType;
import com.vertxcuda.codec.CodecProvider;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.codec.WireIn;
import com.vertxcuda.codec.WireOut;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.kernel.Access;
import com.vertxcuda.kernel.KernelArg;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelReply;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.kernel.ModuleHandle;

import java.util.ArrayList;
import java.util.List;

/** Binary wire formats of the kernel requests and replies. Bump a type's version when its layout changes. */
public final class KernelWireTypes implements CodecProvider {

  private static final int MAX_LIST = 1024;

  public static final WireType<KernelRequest> KERNEL_REQUEST = WireType.of(KernelRequest.class, 2, // 2: handles by reference
    (r, out) -> {
      out.writeEnum(r.getOp()).writeString(r.getPtx()).writeBuffer(r.getImage()).writeString(r.getSource())
        .writeString(r.getName()).writeString(r.getArch());
      writeStrings(out, r.getCompileOptions());
      writeModule(out, r.getModule());
      out.writeString(r.getFunction());
      writeInts(out, r.getGrid());
      writeInts(out, r.getBlock());
      out.writeInt(r.getSharedMemoryBytes());
      List<KernelArg> args = r.getArgs();
      out.writeInt(args == null ? -1 : args.size());
      if (args != null) {
        for (KernelArg a : args) {
          out.writeBoolean(a != null);
          if (a != null) {
            out.writeHandle(a.getBuffer()).writeEnum(a.getAccess()).writeEnum(a.getDtype()).writeLong(a.getBits());
          }
        }
      }
      out.writeHandle(r.getX()).writeHandle(r.getY()).writeHandle(r.getOutput()).writeDouble(r.getScalar());
    },
    in -> {
      KernelRequest r = new KernelRequest(in.readEnum(KernelOp.class)).setPtx(in.readString()).setImage(in.readBuffer())
        .setSource(in.readString()).setName(in.readString()).setArch(in.readString())
        .setCompileOptions(readStrings(in)).setModule(readModule(in)).setFunction(in.readString())
        .setGrid(readInts(in)).setBlock(readInts(in)).setSharedMemoryBytes(in.readInt());
      int n = size(in);
      List<KernelArg> args = n < 0 ? null : new ArrayList<>();
      for (int i = 0; i < n; i++) {
        args.add(in.readBoolean() ? new KernelArg().setBuffer(in.readHandle()).setAccess(in.readEnum(Access.class))
          .setDtype(in.readEnum(DType.class)).setBits(in.readLong()) : null);
      }
      return r.setArgs(args).setX(in.readHandle()).setY(in.readHandle()).setOutput(in.readHandle())
        .setScalar(in.readDouble());
    });

  public static final WireType<KernelReply> KERNEL_REPLY = WireType.of(KernelReply.class, 1,
    (r, out) -> {
      writeModule(out, r.getModule());
      out.writeHandle(r.getOutput()).writeString(r.getLog()).writeBoolean(r.isCached());
    },
    in -> new KernelReply().setModule(readModule(in)).setOutput(in.readHandle()).setLog(in.readString())
      .setCached(in.readBoolean()));

  @Override
  public List<WireType<?>> wireTypes() {
    return List.of(KERNEL_REQUEST, KERNEL_REPLY);
  }

  private static void writeModule(WireOut out, ModuleHandle m) {
    out.writeBoolean(m != null);
    if (m != null) {
      out.writeString(m.node()).writeInt(m.device()).writeLong(m.generation()).writeLong(m.id())
        .writeLong(m.tokenHigh()).writeLong(m.tokenLow());
    }
  }

  private static ModuleHandle readModule(WireIn in) {
    if (!in.readBoolean()) {
      return null;
    }
    String node = in.readString();
    if (node == null) {
      throw new WireFormatException("malformed ModuleHandle on the wire: no node");
    }
    return new ModuleHandle(node, in.readInt(), in.readLong(), in.readLong(), in.readLong(), in.readLong());
  }

  private static void writeStrings(WireOut out, List<String> list) {
    out.writeInt(list == null ? -1 : list.size());
    if (list != null) {
      list.forEach(out::writeString);
    }
  }

  private static List<String> readStrings(WireIn in) {
    int n = size(in);
    if (n < 0) {
      return null;
    }
    List<String> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(in.readString());
    }
    return list;
  }

  private static void writeInts(WireOut out, List<Integer> list) {
    out.writeInt(list == null ? -1 : list.size());
    if (list != null) {
      for (Integer v : list) {
        out.writeBoolean(v != null);
        out.writeInt(v == null ? 0 : v);
      }
    }
  }

  private static List<Integer> readInts(WireIn in) {
    int n = size(in);
    if (n < 0) {
      return null;
    }
    List<Integer> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      boolean present = in.readBoolean();
      int v = in.readInt();
      list.add(present ? v : null);
    }
    return list;
  }

  private static int size(WireIn in) {
    int n = in.readInt();
    if (n < -1 || n > MAX_LIST) {
      throw new WireFormatException("malformed kernel message on the wire: list of " + n);
    }
    return n;
  }
}
