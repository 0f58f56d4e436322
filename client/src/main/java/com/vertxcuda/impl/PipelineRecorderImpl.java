package com.vertxcuda.impl;

import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.PipelineRecorder;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.DownloadIntoRequest;
import com.vertxcuda.message.FillRequest;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects steps on the caller's thread; the first step that cannot even be sent (a fill value out
 * of its dtype's range, a body with no wire form, a transfer buffer the device does not lend) is remembered and fails {@link #build()} with
 * BAD_REQUEST naming it, and nothing is sent.
 */
final class PipelineRecorderImpl implements PipelineRecorder {

  private final RequestSender sender;
  private final List<PipelineStep> steps = new ArrayList<>();
  private CudaException refused;
  private boolean built;

  PipelineRecorderImpl(RequestSender sender) {
    this.sender = sender;
  }

  @Override
  public PipelineRecorder fill(BufferHandle target, double value) {
    if (target == null) {
      return refuse("handle is missing");
    }
    try {
      return add(null, FillRequest.of(target, value));
    } catch (IllegalArgumentException e) {
      return refuse(e.getMessage());
    }
  }

  @Override
  public PipelineRecorder fillInteger(BufferHandle target, long value) {
    if (target == null) {
      return refuse("handle is missing");
    }
    try {
      return add(null, FillRequest.ofInteger(target, value));
    } catch (IllegalArgumentException e) {
      return refuse(e.getMessage());
    }
  }

  @Override
  public PipelineRecorder copy(BufferHandle source, BufferHandle target) {
    return add(null, new CopyRequest(source, target));
  }

  @Override
  public PipelineRecorder upload(Buffer transferBuffer, BufferHandle target) {
    if (target == null) {
      return refuse("target is missing");
    }
    String why = notLent(transferBuffer);
    return why != null ? refuse("upload: " + why) : add(null, new UploadRequest(target, transferBuffer));
  }

  @Override
  public PipelineRecorder download(BufferHandle source, Buffer transferBuffer) {
    if (source == null) {
      return refuse("source is missing");
    }
    String why = notLent(transferBuffer);
    return why != null ? refuse("download: " + why) : add(null, new DownloadIntoRequest(source, transferBuffer));
  }

  // Why a step cannot name this memory, or null: only a device of this JVM lends memory that its
  // steps may name; whether it is lent and live, and its length, the device checks at build.
  private String notLent(Buffer transferBuffer) {
    if (transferBuffer == null) {
      return "the transfer buffer is missing";
    }
    TransferMemory lent = sender.lent();
    if (lent == null) {
      return "the device is not served in this JVM, so it cannot take a transfer buffer (its memory is not there)";
    }
    if (!lent.lends(transferBuffer)) {
      return "the buffer is not a transfer buffer of this device (DeviceVerticle.allocateTransferBuffer)";
    }
    return null;
  }

  @Override
  public PipelineRecorder step(Library library, Object request) {
    if (library == null) {
      return refuse("the library is missing");
    }
    if (request == null) {
      return refuse("the request is missing");
    }
    try {
      CudaCodecs.wireTypeOf(request);
    } catch (IllegalArgumentException e) {
      return refuse(e.getMessage());
    }
    return add(library, request);
  }

  @Override
  public int size() {
    return steps.size();
  }

  @Override
  public Future<PipelineHandle> build() {
    if (built) {
      return sender.refuse(new CudaException(FailureCode.BAD_REQUEST, "this recorder was built already"));
    }
    built = true;
    if (refused != null) {
      return sender.refuse(refused);
    }
    if (steps.isEmpty()) {
      return sender.refuse(new CudaException(FailureCode.BAD_REQUEST, "steps is empty: nothing to record"));
    }
    if (steps.size() > RecordRequest.MAX_STEPS) {
      return sender.refuse(new CudaException(FailureCode.BAD_REQUEST, "steps holds " + steps.size()
        + " requests; at most " + RecordRequest.MAX_STEPS + " go in one pipeline"));
    }
    return sender.request(new RecordRequest(new ArrayList<>(steps)));
  }

  private PipelineRecorder add(Library library, Object body) {
    usable();
    steps.add(new PipelineStep(library, body));
    return this;
  }

  // A recorder takes no step once built, a bad one included: a programming error, thrown at once.
  private void usable() {
    if (built) {
      throw new IllegalStateException("this recorder was built already: record a new pipeline with DeviceClient.record()");
    }
  }

  private PipelineRecorder refuse(String why) {
    usable();
    if (refused == null) {
      refused = new CudaException(FailureCode.BAD_REQUEST, "steps[" + steps.size() + "]: " + why);
    }
    steps.add(new PipelineStep(null, null));
    return this;
  }
}
