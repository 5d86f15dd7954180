package heapledger.rt;

import java.util.concurrent.locks.LockSupport;

/**
 * The agent's --adapt trigger on the counting thread (docs/instrumentation.md, "Adaptive path
 * counters under the agent"): a path counter whose count on one thread reaches the threshold
 * (Acct.ADAPT_AFTER) wakes the agent's re-instrumenting thread at once, instead of leaving the
 * class profiling until that thread's next look. One counter at the threshold means its class
 * counted at least that many increments, so the class is due; the looks remain for classes
 * whose increments spread over many counters or threads.
 */
public final class AdaptTrigger {
    private static volatile Thread waiter;

    private AdaptTrigger() {}

    /**
     * Names the thread that reached wakes: the agent's, from premain. LockSupport is loaded here,
     * on the agent's thread, never first on a program thread in the middle of a count.
     */
    public static void wake(Thread t) {
        LockSupport.unpark(null);
        waiter = t;
    }

    /** A counter reached the threshold on the calling thread: wakes the waiter. Never throws. */
    static void reached() {
        Thread w = waiter;
        if (w != null) LockSupport.unpark(w);
    }
}
