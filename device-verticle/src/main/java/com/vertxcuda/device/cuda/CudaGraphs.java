package com.vertxcuda.device.cuda;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.GraphCapture;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUgraphNode;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstreamCaptureMode;
import jcuda.driver.JCudaDriver;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Stream capture of recorded pipelines through the driver API. The capture begins on the
 * pipeline's stream; each step's stream joins it through an event recorded on the pipeline stream
 * (a fork), the step queues its work, and the pipeline stream joins back through an event recorded
 * on the step's stream, so the graph runs the steps one after another whatever streams they use.
 * The capture is RELAXED: the capturing thread may still make calls that are not stream work
 * (a library loading a kernel lazily), and other threads (the completion poller, preparations)
 * are never restricted. Capture-time failures are not sticky: the context stays usable.
 */
final class CudaGraphs {

  private CudaGraphs() {
  }

  static GraphCapture.Graph capture(CudaContext context, GpuStream origin, List<GraphCapture.Step> steps)
    throws BackendException {
    CudaErrors.checkAlive();
    CUstream o = context.stream(origin);
    CUevent fork = new CUevent();
    CUevent join = new CUevent();
    CudaErrors.check(JCudaDriver.cuEventCreate(fork, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    int joinCreated = JCudaDriver.cuEventCreate(join, CUevent_flags.CU_EVENT_DISABLE_TIMING);
    if (joinCreated != CUresult.CUDA_SUCCESS) {
      JCudaDriver.cuEventDestroy(fork);
      throw CudaErrors.failure(joinCreated, "cuEventCreate");
    }
    CUgraph graph = new CUgraph();
    try {
      CudaErrors.check(JCudaDriver.cuStreamBeginCapture(o, CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
        "cuStreamBeginCapture");
      Exception failed = null;
      for (int i = 0; i < steps.size() && failed == null; i++) {
        GraphCapture.Step step = steps.get(i);
        boolean forked = step.stream() != origin;
        CUstream s = context.stream(step.stream());
        try {
          if (forked) {
            CudaErrors.check(JCudaDriver.cuEventRecord(fork, o), "cuEventRecord (fork)");
            CudaErrors.check(JCudaDriver.cuStreamWaitEvent(s, fork, 0), "cuStreamWaitEvent (fork)");
          }
          step.work().enqueue();
        } catch (BackendException | RuntimeException e) {
          // Kept as thrown: Failures maps it where the request is answered.
          failed = e;
        }
        if (forked) {
          // Joined back even after a failure, so ending the capture leaves no stream capturing.
          int r = JCudaDriver.cuEventRecord(join, s);
          if (r == CUresult.CUDA_SUCCESS) {
            r = JCudaDriver.cuStreamWaitEvent(o, join, 0);
          }
          if (r != CUresult.CUDA_SUCCESS && failed == null) {
            failed = CudaErrors.failure(r, "joining step " + i + " back into the capture");
          }
        }
      }
      int ended = JCudaDriver.cuStreamEndCapture(o, graph);
      if (failed != null) {
        if (ended == CUresult.CUDA_SUCCESS) {
          JCudaDriver.cuGraphDestroy(graph);
        }
        if (failed instanceof BackendException) {
          throw (BackendException) failed;
        }
        throw (RuntimeException) failed;
      }
      CudaErrors.check(ended, "cuStreamEndCapture");
    } finally {
      JCudaDriver.cuEventDestroy(fork);
      JCudaDriver.cuEventDestroy(join);
    }
    CUgraphExec exec = new CUgraphExec();
    byte[] log = new byte[2048];
    int r = JCudaDriver.cuGraphInstantiate(exec, graph, new CUgraphNode(), log, log.length);
    if (r != CUresult.CUDA_SUCCESS) {
      JCudaDriver.cuGraphDestroy(graph);
      String text = new String(log, StandardCharsets.UTF_8).trim().replace("\0", "");
      throw CudaErrors.failure(r, "cuGraphInstantiate" + (text.isEmpty() ? "" : " (" + text + ")"));
    }
    // Uploads the graph's work to the device now, so the first replay is as fast as the rest.
    r = JCudaDriver.cuGraphUpload(exec, o);
    if (r != CUresult.CUDA_SUCCESS) {
      JCudaDriver.cuGraphExecDestroy(exec);
      JCudaDriver.cuGraphDestroy(graph);
      throw CudaErrors.failure(r, "cuGraphUpload");
    }
    return new CudaGraph(context, graph, exec);
  }

  /** An instantiated graph; launched on the submission thread only. */
  private static final class CudaGraph implements GraphCapture.Graph {
    private final CudaContext context;
    private final CUgraph graph;
    private final CUgraphExec exec;
    private boolean closed;

    CudaGraph(CudaContext context, CUgraph graph, CUgraphExec exec) {
      this.context = context;
      this.graph = graph;
      this.exec = exec;
    }

    @Override
    public void launch(GpuStream stream) throws BackendException {
      CudaErrors.checkAlive();
      if (closed) {
        throw BackendException.of(FailureCode.NOT_FOUND, "the pipeline's graph was destroyed");
      }
      CudaErrors.check(JCudaDriver.cuGraphLaunch(exec, context.stream(stream)), "cuGraphLaunch");
    }

    @Override
    public void close(boolean poisoned) {
      if (closed) {
        return;
      }
      closed = true;
      if (poisoned || CudaErrors.poisonedBy() != null) {
        return;
      }
      JCudaDriver.cuGraphExecDestroy(exec);
      JCudaDriver.cuGraphDestroy(graph);
    }
  }
}
