package heapledger.rt;

import java.util.ArrayList;

/**
 * Entry point of the heapledger runtime for rewritten code, and owner of the global state:
 * the registry of per-thread accounts, the classes seen at each object allocation site, and
 * the snapshot schedule.
 *
 * <p>This class and everything it uses belong to java.base, so loading the runtime can never
 * wait on an application class loader (no deadlock, no ClassCircularityError), and the runtime
 * is never rewritten, so it never counts its own allocations.
 */
public final class Ledger {
    private Ledger() {}

    private static final ThreadLocal<Acct> CURRENT = new ThreadLocal<Acct>() {
        @Override
        protected Acct initialValue() {
            return Quiet.initial(Thread.currentThread());
        }
    };

    private static final ArrayList<Acct> THREADS = new ArrayList<Acct>();
    /** Counts of threads that have ended, folded in at snapshot time so the registry stays small. */
    static final Counts RETIRED = new Counts();

    /** Internal failures swallowed so as never to throw into the application. */
    static final java.util.concurrent.atomic.AtomicLong DROPPED = new java.util.concurrent.atomic.AtomicLong();
    static volatile String firstDrop;


    /** The calling thread's accounting state; rewritten methods call this once on entry. */
    public static Acct here() {
        return CURRENT.get();
    }

    /**
     * Thread states by the id of their thread, in front of CURRENT for the counting fast paths,
     * which are inlined at every allocation site: a ThreadLocal lookup inlines about a hundred
     * bytes of bytecode there, and the JIT's inlining budget then runs out in the program's own
     * hot methods. Ids are handed out in sequence and never reused, so live threads rarely share
     * a slot; a slot holds the last state looked up through it, and a thread whose slot another
     * thread took falls back to CURRENT, which is always right. Not the identity hash: a Thread
     * whose monitor is inflated (another thread is in join() on it) has its hash in the monitor,
     * and the JIT's identityHashCode then calls into the VM at every allocation.
     */
    private static final Acct[] BY_THREAD = new Acct[4096];

    /**
     * {@link #here()} for the counting fast paths and for the entry of '*' methods that fetch
     * on entry; small enough to inline everywhere. Never null and never throws, so rewritten
     * code may rely on it.
     */
    public static Acct current() {
        Thread th = Thread.currentThread();
        long id = th.getId();
        Acct c = BY_THREAD[(int) id & (BY_THREAD.length - 1)];
        if (c != null && c.tid == id) return c;
        return miss(th);
    }

    /**
     * Threads inside {@link #miss}. With calling contexts and the JDK rewritten (--context cct
     * --jdk) every JDK method that calls anything fetches the thread's state on entry, so the
     * JDK code a first lookup runs (ThreadLocal's map, the thread's name in Quiet, registering)
     * would look the thread up again, without end: a nested lookup gets a private state instead,
     * as Quiet gives one to a nested registration. A ThreadList: it calls no JDK code.
     */
    private static final ThreadList MISSING = new ThreadList();

    private static Acct miss(Thread th) {
        if (MISSING.contains(th)) {
            Acct q = new Acct(th);
            q.quiet = true;
            return q;
        }
        Acct a;
        MISSING.add(th);
        try {
            a = CURRENT.get();
        } catch (Throwable e) { // out of memory while registering: count where nobody reads
            drop(e);
            a = new Acct(th);
            a.quiet = true;
        } finally {
            MISSING.remove(th);
        }
        // Installed after the lookup: a nested first lookup (Quiet) installs its private state
        // first, and this outer one then replaces it with the real one.
        remember(th, a);
        return a;
    }

    private static void remember(Thread th, Acct a) {
        BY_THREAD[(int) th.getId() & (BY_THREAD.length - 1)] = a;
    }

    static Acct register(Thread t) {
        Acct a = new Acct(t);
        synchronized (THREADS) {
            THREADS.add(a);
        }
        return a;
    }

    static void noteClass(int site, Object o) {
        if (SiteClasses.get(site) == null) SiteClasses.put(site, o.getClass());
    }

    static void drop(Throwable e) {
        DROPPED.incrementAndGet();
        if (firstDrop == null) firstDrop = String.valueOf(e);
    }

    /**
     * Merges the counts of all threads. Threads that have ended are folded into RETIRED and
     * forgotten, so a program that starts many short threads does not grow the registry.
     */
    static Counts merge() {
        return merge(null);
    }

    /**
     * As {@link #merge()}, and with tree non-null (--context cct) the threads' calling-context
     * trees into tree in the same pass, dead threads' trees folded into the retired tree.
     */
    static Counts merge(ContextTree tree) {
        Counts total = new Counts();
        synchronized (THREADS) {
            for (int i = THREADS.size() - 1; i >= 0; i--) {
                Acct a = THREADS.get(i);
                if (!a.alive()) {
                    synchronized (RETIRED) {
                        a.addTo(RETIRED);
                    }
                    Counts sw = a.switches;
                    if (sw != null) {
                        synchronized (Switches.RETIRED) {
                            Switches.RETIRED.addAll(sw);
                        }
                    }
                    if (Context.ON) ContextTree.retire(a);
                    THREADS.remove(i);
                } else {
                    a.addTo(total);
                    if (tree != null) tree.add(a);
                }
            }
        }
        synchronized (RETIRED) {
            total.addAll(RETIRED);
        }
        if (tree != null) tree.addRetired();
        return total;
    }

    /** The account switches every thread counted (--count-increments, Switches), ended threads' included. */
    static Counts switches() {
        Counts total = new Counts();
        synchronized (THREADS) {
            for (Acct a : THREADS) {
                Counts sw = a.switches;
                if (sw != null) total.addAll(sw);
            }
        }
        synchronized (Switches.RETIRED) {
            total.addAll(Switches.RETIRED);
        }
        return total;
    }

    /** Number of threads that currently have accounting state (for the snapshot header). */
    static int liveThreads() {
        synchronized (THREADS) {
            return THREADS.size();
        }
    }

    /** Table lines received at run time (the agent's transform service), read at each snapshot. */
    static final StringBuilder DEFINED = new StringBuilder();

    /**
     * Names accounts and sites with table lines (docs/formats.md, without the version line), for
     * classes rewritten while the program runs; later lines for the same ID win.
     */
    public static void defineTable(String lines) {
        synchronized (DEFINED) {
            DEFINED.append(lines);
            if (lines.length() > 0 && lines.charAt(lines.length() - 1) != '\n') DEFINED.append('\n');
        }
    }

    /** The lines given to {@link #defineTable} so far. */
    public static String definedTable() {
        synchronized (DEFINED) {
            return DEFINED.toString();
        }
    }

    /**
     * The agent's --adapt: the counts of the site IDs ids (sorted), over every account and every
     * thread, ended threads' included. Read while the program counts, so a count may lag by the
     * increments in flight; it only decides when and how a class is re-instrumented.
     */
    public static long[] totals(int[] ids) {
        long[] out = new long[ids.length];
        long[] tab = merge().table;
        for (int s = 0; s < tab.length; s += Counts.STRIDE) {
            if (tab[s] == 0) continue;
            int k = java.util.Arrays.binarySearch(ids, Counts.site(tab[s] - 1));
            if (k >= 0) out[k] += tab[s + 1];
        }
        return out;
    }

    /** The class whose code counted at path counter id first, or null when it has not counted. */
    public static Class<?> countedBy(int id) {
        return SiteClasses.get(id);
    }

    /** Header lines the agent adds to every snapshot (--adapt's "adapted"), by key. */
    static final java.util.Map<String, String> AGENT_HEADER = new java.util.TreeMap<String, String>();

    /** Sets (or, with value null, removes) a snapshot header line of the agent's. */
    public static void header(String key, String value) {
        synchronized (AGENT_HEADER) {
            if (value == null) AGENT_HEADER.remove(key);
            else AGENT_HEADER.put(key, value);
        }
    }

    /**
     * From a shutdown hook only: waits, at most millis, for the exit snapshot to be written.
     * Returns at once if the runtime registered no exit snapshot.
     */
    public static void awaitExitSnapshot(long millis) throws InterruptedException {
        Snapshots.awaitExit(millis);
    }

    /** Writes a snapshot now; returns the file written, or null if writing failed (reported on stderr). */
    public static String snapshot(String reason) {
        Acct prev = mute();
        try {
            return Snapshots.write(reason);
        } finally {
            unmute(prev);
        }
    }

    /**
     * The runtime (or the agent) is about to work on a program's thread: until {@link #unmute},
     * rewritten JDK code it calls counts into a private state nobody reads (Quiet). Methods
     * already running keep the state they fetched on entry. Returns what unmute restores.
     */
    public static Acct mute() {
        Acct prev = CURRENT.get();
        Thread th = Thread.currentThread();
        Acct quiet = new Acct(th);
        quiet.quiet = true;
        CURRENT.set(quiet);
        remember(th, quiet);
        return prev;
    }

    public static void unmute(Acct prev) {
        CURRENT.set(prev);
        remember(Thread.currentThread(), prev);
    }

    // Last, so that every static field above is set before snapshots, budgets and liveness,
    // which read them, start.
    static {
        Snapshots.start();
    }
}
