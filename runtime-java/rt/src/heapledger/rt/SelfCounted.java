package heapledger.rt;

/**
 * Whether the runtime's own work can reach the counting methods at all: only when the agent
 * rewrites the JDK's classes (--jdk) or hooks java.lang.Object's constructor (--object-init).
 * That work then counts into private states (Quiet, Ledger.mute) that no snapshot reads, and
 * two more things follow (docs/agent.md, "JDK classes and liveness"):
 * <ul>
 * <li>liveness tracks nothing a private state counts (Live.track), since tracked objects are
 * global and would show up as the program's live objects;
 * <li>the runtime asks the JDK for no GC notifications (Live.start): the JDK would build them on
 * its own notification thread, in rewritten code, for us. The liveness thread and snapshots
 * read the collection counts instead.
 * </ul>
 * The agent calls {@link #enable} before it installs its transformer, which also starts
 * liveness there, while the JDK's code is still unmodified: its start-up then never runs
 * rewritten code that would call back into a runtime whose statics are not yet set.
 */
public final class SelfCounted {
    private SelfCounted() {}

    static volatile boolean on;

    public static void enable() {
        on = true;
        Live.describe(); // initialises liveness now (settings, its thread), if it is on
    }
}
