package heapledger.rt;

/**
 * Keeps the runtime out of its own counts when JDK classes are rewritten too (the agent's
 * --jdk): a rewritten ArrayList.grow, HashMap.resize or StringBuilder then calls
 * {@link Ledger#here()} from inside the runtime itself. docs/agent.md explains the whole scheme.
 *
 * <p>Two cases need no check on the fast path, because they are decided when a thread gets its
 * accounting state: (1) a thread's first {@code here()} registers it (ArrayList.add, which may
 * grow), and a rewritten grow calls {@code here()} again before the first has returned: the
 * ThreadLocal has no value yet, so its initialValue would run again, without end. The nested
 * call gets a private state that is never registered, whose counts nobody reads; the outer call
 * then stores the real one. (2) The runtime's and the agent's own threads (named "heapledger-")
 * get such a private state for good: what the snapshot writer allocates in JDK code is not the
 * program's. Work the runtime does on a program's thread is wrapped in
 * {@link Ledger#mute()}/{@link Ledger#unmute}.
 */
final class Quiet {
    private Quiet() {}

    /** Threads inside their first registration. */
    private static final ThreadList REGISTERING = new ThreadList();

    static Acct initial(Thread t) {
        if (t.getName().startsWith("heapledger-") || REGISTERING.contains(t)) {
            Acct a = new Acct(t);
            a.quiet = true;
            return a;
        }
        REGISTERING.add(t);
        try {
            return Ledger.register(t);
        } finally {
            REGISTERING.remove(t);
        }
    }
}
