package com.vertxcuda.device.context;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestHandler;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.device.spi.UnreadableRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A library's request types reach the submission thread through their descriptors alone: a body
 * of a registered type is served by its handler, any other body is BAD_REQUEST naming it, an
 * unreadable one says why, a library that could not open answers UNSUPPORTED naming why, and a
 * library may not claim a lane or an admission rule that only the device's own types have.
 */
@Tag("runs-once")
class RequestTableTest {

  /** A body the test library serves. */
  record Echo(String text) {
  }

  /** Answers an echo with its text, on the submission thread. */
  static final class EchoLibrary implements RequestHandler {
    static final RequestType<EchoLibrary, Echo> ECHO = RequestType.of(EchoLibrary.class, Echo.class)
      .handler((h, r, body, prepared) -> {
        r.reply(body.text());
        return null;
      }).build();

    @Override
    public List<RequestType<?, ?>> types() {
      return List.of(ECHO);
    }
  }

  private SubmissionLoop loop;

  @BeforeEach
  void start() {
    loop = new SubmissionLoop("request-table-test", 0, () -> { });
    loop.start();
  }

  @AfterEach
  void stop() throws Exception {
    loop.close(new CudaException(FailureCode.CONTEXT_LOST, "test over"), () -> { }).get(10, TimeUnit.SECONDS);
  }

  @Test
  void aRegisteredTypeIsServedAndAnyOtherBodyIsABadRequest() throws Exception {
    loop.execute(() -> loop.register(Library.BLAS, new EchoLibrary()));
    assertEquals("hello", answer(Library.BLAS, new Echo("hello")));

    CudaException other = failure(Library.BLAS, 42);
    assertEquals(FailureCode.BAD_REQUEST, other.code());
    assertTrue(other.getMessage().contains("the blas library does not serve Integer"), other.getMessage());

    CudaException unreadable = failure(Library.BLAS, new UnreadableRequest("a truncated frame"));
    assertEquals(FailureCode.BAD_REQUEST, unreadable.code());
    assertTrue(unreadable.getMessage().contains("cannot be read: a truncated frame"), unreadable.getMessage());

    CudaException absent = failure(Library.FFT, new Echo("x"));
    assertEquals(FailureCode.UNSUPPORTED, absent.code(), absent.getMessage());
  }

  @Test
  void aLibraryThatCouldNotOpenAnswersUnsupportedNamingWhy() throws Exception {
    loop.execute(() -> loop.refuse(Library.RAND, new CudaException(FailureCode.UNSUPPORTED,
      "the rand library cannot run on this device: no curand")));
    CudaException e = failure(Library.RAND, new Echo("x"));
    assertEquals(FailureCode.UNSUPPORTED, e.code());
    assertTrue(e.getMessage().contains("no curand"), e.getMessage());
  }

  @Test
  void aLibraryTypeMayNotTakeTheControlLaneOrCrossThroughTheRegion() {
    RequestType<EchoLibrary, Echo> control = RequestType.of(EchoLibrary.class, Echo.class)
      .lane(RequestType.Lane.CONTROL).build();
    RequestType<EchoLibrary, Echo> region = RequestType.of(EchoLibrary.class, Echo.class)
      .crossing(RequestType.Crossing.REGION_TO_DEVICE).build();
    RequestTable table = new RequestTable();
    for (RequestType<?, ?> t : List.of(control, region)) {
      assertThrows(IllegalArgumentException.class, () -> table.register(Library.KERNEL, () -> List.of(t)));
    }
  }

  private Object answer(Library library, Object body) throws Exception {
    return send(library, body).get(10, TimeUnit.SECONDS);
  }

  private CudaException failure(Library library, Object body) throws Exception {
    CompletableFuture<Object> f = send(library, body);
    try {
      Object ok = f.get(10, TimeUnit.SECONDS);
      throw new AssertionError("answered " + ok);
    } catch (java.util.concurrent.ExecutionException e) {
      return (CudaException) e.getCause();
    }
  }

  private CompletableFuture<Object> send(Library library, Object body) {
    CompletableFuture<Object> answer = new CompletableFuture<>();
    RequestType<?, ?> type = RequestTable.admitted(library, body);
    loop.submit(new Request() {
      @Override public Library library() { return library; }
      @Override public Object body() { return body; }
      @Override public RequestType<?, ?> type() { return type; }
      @Override public long deadline() { return System.nanoTime() + TimeUnit.SECONDS.toNanos(10); }
      @Override public void reply(Object b) { answer.complete(b); }
      @Override public void fail(CudaException e) { answer.completeExceptionally(e); }
    });
    return answer;
  }
}
