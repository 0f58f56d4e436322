package com.vertxcuda.device.context;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device's one in-flight table, for requests sent over a link: one answer each, the reply frame
 * still reaches what it must release after a deadline answered first, and a link's loss answers
 * every request on it, and only those.
 */
@Tag("runs-once")
class InFlightTest {

  private static class Call implements InFlight.Linked {
    final AtomicInteger replies = new AtomicInteger();
    final List<FailureCode> failures = new ArrayList<>();

    @Override
    public void replied(Object body) {
      replies.incrementAndGet();
    }

    @Override
    public void failed(CudaException failure) {
      failures.add(failure.code());
    }
  }

  private static InFlight.Entry entry(InFlight table, Promise<Object> answer, long deadline) {
    return table.entry("body", InFlight.Answer.of(answer), null, deadline, null).track();
  }

  @Test
  void aRequestAnsweredByItsDeadlineStaysUntilItsFrameComes() {
    InFlight table = new InFlight();
    Promise<Object> answer = Promise.promise();
    InFlight.Entry e = entry(table, answer, System.nanoTime() - 1);
    Call call = new Call();
    Object link = new Object();
    e.link(link, call);
    table.expire(System.nanoTime());
    assertEquals(FailureCode.TIMEOUT, ((CudaException) answer.future().cause()).code());
    assertEquals(1, table.size(), "its frame is still due: the slot it names is not free yet");

    InFlight.Linked due = table.linked(e.id());
    due.replied("late");
    e.reply("late"); // the frame's own answer: dropped, the deadline answered first
    assertEquals(1, call.replies.get());
    assertEquals(0, table.size());
    assertNull(table.linked(e.id()), "a frame is taken once");
    assertEquals(0, table.failLinked(link, new CudaException(FailureCode.CONTEXT_LOST, "gone")));
  }

  @Test
  void aLinksLossAnswersEveryRequestOnItOnceAndOnlyThose() {
    InFlight table = new InFlight();
    Object lost = new Object();
    Object other = new Object();
    List<Promise<Object>> answers = new ArrayList<>();
    List<Call> calls = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Promise<Object> p = Promise.promise();
      answers.add(p);
      InFlight.Entry e = entry(table, p, Long.MAX_VALUE);
      Call call = new Call() {
        @Override
        public void failed(CudaException failure) {
          super.failed(failure);
          e.fail(failure);
        }
      };
      calls.add(call);
      e.link(i % 2 == 0 ? lost : other, call);
    }
    assertEquals(3, table.failLinked(lost, new CudaException(FailureCode.CONTEXT_LOST, "the device host is gone")));
    assertEquals(0, table.failLinked(lost, new CudaException(FailureCode.CONTEXT_LOST, "again")));
    for (int i = 0; i < 6; i++) {
      if (i % 2 == 0) {
        assertEquals(List.of(FailureCode.CONTEXT_LOST), calls.get(i).failures);
        assertEquals(FailureCode.CONTEXT_LOST, ((CudaException) answers.get(i).future().cause()).code());
      } else {
        assertTrue(calls.get(i).failures.isEmpty());
        assertTrue(!answers.get(i).future().isComplete(), "a request on another link is not answered");
      }
    }
    assertEquals(3, table.size());
    table.failAll(FailureCode.CONTEXT_LOST, "undeployed");
    assertEquals(3, table.size(), "answered, but their frames are still due");
    assertEquals(3, table.failLinked(other, new CudaException(FailureCode.CONTEXT_LOST, "stopped")));
    assertEquals(0, table.size());
  }

  @Test
  void theDevicesOwnRequestsAreInTheTableButNotCounted() {
    InFlight table = new InFlight();
    Promise<Object> mine = Promise.promise();
    InFlight.Entry own = table.entry("stats", InFlight.Answer.of(mine), null, Long.MAX_VALUE, null).own().track();
    InFlight.Entry client = entry(table, Promise.promise(), Long.MAX_VALUE);
    Object link = new Object();
    own.link(link, new Call());
    assertEquals(1, table.size(), "only the client's request is in flight");
    table.failAll(FailureCode.CONTEXT_LOST, "lost");
    assertTrue(!mine.future().isComplete(), "the device's own request is its tier's to answer (a spare's start is no loss)");
    assertEquals(0, table.size());
    assertEquals(java.util.Map.of(FailureCode.CONTEXT_LOST.name(), 1L), table.failuresByCode(), "counted: the client's only");
    client.reply("late");
    assertEquals(0, table.served());
    InFlight.Linked call = table.linked(own.id());
    call.failed(new CudaException(FailureCode.CONTEXT_LOST, "gone"));
    own.fail(new CudaException(FailureCode.CONTEXT_LOST, "gone"));
    assertEquals(FailureCode.CONTEXT_LOST, ((CudaException) mine.future().cause()).code(), "its link's loss reaches it");
    assertEquals(java.util.Map.of(FailureCode.CONTEXT_LOST.name(), 1L), table.failuresByCode(), "not counted");
    assertEquals(0, table.failLinked(link, new CudaException(FailureCode.CONTEXT_LOST, "again")));
  }

  @Test
  void aReplyWhoseRewriteFailsIsAnsweredOnceWithATypedFailure() {
    InFlight table = new InFlight();
    Promise<Object> answer = Promise.promise();
    InFlight.Entry e = entry(table, answer, Long.MAX_VALUE).finish(body -> {
      throw new IllegalStateException("stats of another kind");
    });
    assertTrue(e.tryReply("body"), "this was the entry's answer");
    assertTrue(answer.future().failed(), "answered, not left to its deadline");
    CudaException failure = (CudaException) answer.future().cause();
    assertTrue(failure.getMessage().contains("finishing the reply"), failure.getMessage());
    assertEquals(0, table.size(), "settled: its slot is free");
    e.fail(new CudaException(FailureCode.TIMEOUT, "later"));
    assertTrue(!e.tryReply("again"), "one answer only");
  }
}
