package com.vertxcuda.kernel.impl;

import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.kernel.KernelArg;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelReply;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.kernel.ModuleHandle;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

public final class KernelClientImpl implements KernelClient {

  private final RequestSender sender;

  public KernelClientImpl(Vertx vertx, DeviceClientOptions options) {
    this.sender = RequestSender.of(vertx, options, Library.KERNEL);
  }

  @Override
  public String address() {
    return sender.address();
  }

  @Override
  public Future<KernelReply> execute(KernelRequest request) {
    return sender.request(request);
  }

  @Override
  public Future<ModuleHandle> loadPtx(String ptx) {
    return execute(new KernelRequest(KernelOp.LOAD_PTX).setPtx(ptx)).map(KernelReply::getModule);
  }

  @Override
  public Future<KernelReply> compile(String source, String arch, List<String> options) {
    return execute(new KernelRequest(KernelOp.COMPILE).setSource(source).setArch(arch)
      .setCompileOptions(options == null ? new ArrayList<>() : new ArrayList<>(options)));
  }

  @Override
  public Future<Void> launch(ModuleHandle module, String function, int[] grid, int[] block, int sharedMemoryBytes,
                             KernelArg... args) {
    if (args == null) {
      // Refused on the caller's context, in a task of its own: nothing runs.
      return sender.refuse(new CudaException(FailureCode.BAD_REQUEST,
        "args is null: pass no arguments (an empty list) to a kernel that takes none"));
    }
    return execute(new KernelRequest(KernelOp.LAUNCH).setModule(module).setFunction(function)
      .setGrid(dims(grid)).setBlock(dims(block)).setSharedMemoryBytes(sharedMemoryBytes)
      .setArgs(new ArrayList<>(Arrays.asList(args)))).mapEmpty();
  }

  @Override
  public Future<Void> unload(ModuleHandle module) {
    return execute(new KernelRequest(KernelOp.UNLOAD).setModule(module)).mapEmpty();
  }

  @Override
  public Future<BufferHandle> fill(BufferHandle output, double value) {
    return builtin(new KernelRequest(KernelOp.FILL).setOutput(output).setScalar(value));
  }

  @Override
  public Future<BufferHandle> scale(BufferHandle x, double factor, BufferHandle output) {
    return builtin(new KernelRequest(KernelOp.SCALE).setX(x).setScalar(factor).setOutput(output));
  }

  @Override
  public Future<BufferHandle> add(BufferHandle x, BufferHandle y, BufferHandle output) {
    return builtin(new KernelRequest(KernelOp.ADD).setX(x).setY(y).setOutput(output));
  }

  @Override
  public Future<BufferHandle> convert(BufferHandle x, BufferHandle output) {
    return builtin(new KernelRequest(KernelOp.CONVERT).setX(x).setOutput(output));
  }

  @Override
  public Future<BufferHandle> multiply(BufferHandle x, BufferHandle y, BufferHandle output) {
    return builtin(new KernelRequest(KernelOp.MULTIPLY).setX(x).setY(y).setOutput(output));
  }

  private Future<BufferHandle> builtin(KernelRequest r) {
    return execute(r).map(KernelReply::getOutput);
  }

  private static List<Integer> dims(int[] d) {
    return d == null ? null : Arrays.stream(d).boxed().collect(Collectors.toCollection(ArrayList::new));
  }
}
