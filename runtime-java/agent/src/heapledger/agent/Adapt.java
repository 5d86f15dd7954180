package heapledger.agent;

import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

import heapledger.rt.Acct;
import heapledger.rt.Ledger;

/**
 * Adaptive path counters (--adapt N with --counters paths; docs/instrumentation.md, "Adaptive
 * path counters under the agent"). The service first rewrites every class as a profiling run
 * (--counters edges). This class, on its own daemon thread:
 *
 * <ol>
 * <li>reads the chord counters' table lines the service sent (noteTable, on the loading thread,
 * only queues them);
 * <li>every interval, and at once when a chord counter's count on some thread reaches N
 * (Acct.ADAPT_AFTER, on the counting thread), adds up each chord counter's count over all threads
 * (Ledger.totals) and groups the methods that counted by the class whose code counted
 * (Ledger.countedBy);
 * <li>for a class whose chords counted N increments or more, writes its edge profile as snapshot
 * "edges" lines and retransforms it; the transformer, on this thread, sends the class with the
 * profile (profileFor), and the service plans it as --profile would, giving its sites the IDs
 * of the first version and its counters new ones, named before the new code can run;
 * <li>a failure (the service gone or failing, the JVM refusing the new code) leaves the class
 * with its profiling counters: the transformer hands back the bytes it had (current), the JVM
 * keeps them when it refuses. The first failure is said on standard error, all are counted in
 * the snapshot header line "adapted".
 * </ol>
 *
 * The thread is named heapledger-, so the runtime counts nothing it allocates; it holds no lock
 * while it retransforms, and the program's threads never wait for it.
 */
final class Adapt implements Runnable {
    /** One method's chord counters, from their table lines: IDs first to first+n-1. */
    private static final class Chords {
        final String cls, method, hash;
        final int first;
        final String[] edges;

        Chords(String cls, String method, String hash, int first, int n) {
            this.cls = cls;
            this.method = method;
            this.hash = hash;
            this.first = first;
            this.edges = new String[n];
        }
    }

    private final Instrumentation inst;
    private final long after;
    private final long intervalMillis;
    private final boolean verbose;
    /** Table lines the service sent, not yet read (step 1). */
    private final ConcurrentLinkedQueue<String> tables = new ConcurrentLinkedQueue<String>();
    /** Per class, "name@loader", the instrumented bytes it has now, until it is re-instrumented. */
    private final ConcurrentHashMap<String, byte[]> current = new ConcurrentHashMap<String, byte[]>();
    /** The profile of each class being (or once) re-instrumented; the transformer reads it. */
    private final Map<Class<?>, String> profiles = java.util.Collections.synchronizedMap(new java.util.WeakHashMap<Class<?>, String>());
    /** The outcome of the class being re-instrumented: null until the transformer answered it. */
    private volatile String outcome;

    // The thread's own state.
    private final Map<Integer, Chords> chords = new HashMap<Integer, Chords>();
    private final Map<Class<?>, Boolean> done = new java.util.WeakHashMap<Class<?>, Boolean>();
    private int adapted, failed;
    private String firstFailure;
    private volatile boolean stopped;
    private Thread thread;

    Adapt(Instrumentation inst, long after, long intervalMillis, boolean verbose) {
        this.inst = inst;
        this.after = after;
        this.intervalMillis = intervalMillis;
        this.verbose = verbose;
        // What the transformer calls is loaded now, not while a class loads.
        noteTable("");
        profileFor(Adapt.class);
        keep("", "", null);
        current("", "");
        forget("", "");
        answered(null);
    }

    /** The threshold of -Dheapledger.adapt.after (the service's config line), 0 when off. */
    static long threshold() {
        try {
            return Long.parseLong(System.getProperty("heapledger.adapt.after", "0").trim());
        } catch (NumberFormatException e) {
            Agent.warn("--adapt: heapledger.adapt.after is no number; classes keep their profiling counters");
            return 0;
        }
    }

    /** Before the transformer is added: a counter at N wakes the thread from the first class on. */
    void start() {
        Thread t = new Thread(this, "heapledger-adapt");
        t.setDaemon(true);
        thread = t;
        Acct.adaptWaiter(t);
        t.start();
    }

    void stop() {
        stopped = true;
        Thread t = thread;
        if (t != null) t.interrupt();
    }

    /** Step 1, on the loading thread: the answer's table lines, read later. */
    void noteTable(String lines) {
        if (lines.indexOf("\tedge\t") >= 0) tables.add(lines);
    }

    /** Keeps a class's instrumented bytes, handed back if its re-instrumentation fails. */
    void keep(String className, String loader, byte[] bytes) {
        if (bytes != null) current.put(className + "@" + loader, bytes);
    }

    /** The bytes class c has now; null when it has not been instrumented. */
    byte[] current(String className, String loader) {
        return current.get(className + "@" + loader);
    }

    /** In the transformer: the profile to re-instrument c from, or null for a plain rewrite. */
    String profileFor(Class<?> c) {
        return profiles.get(c);
    }

    /** In the transformer: what became of the re-instrumentation (null: changed). */
    void answered(String failure) {
        outcome = failure == null ? "" : failure;
    }

    @Override
    public void run() {
        // Not one of the agent's threads for the transformer (Agent.ownThread): it must take
        // the class this thread retransforms. Its name keeps the runtime from counting it.
        // The interval in nanoseconds, at least the gap and at most a day (no overflow).
        long gap = 1000000L;
        long interval = Math.max(gap, Math.min(intervalMillis, 86400000L) * 1000000L);
        long last = System.nanoTime();
        while (!stopped) {
            try {
                // Woken by a counter at the threshold (Acct.adaptWaiter) or after the interval; a
                // look no sooner than gap after the last, so many counters reaching it at
                // once cost one look, not one each.
                LockSupport.parkNanos(this, interval);
                for (long wait; (wait = last + gap - System.nanoTime()) > 0 && !stopped;) LockSupport.parkNanos(this, wait);
                if (stopped || Thread.currentThread().isInterrupted()) return;
                round();
                last = System.nanoTime();
            } catch (Throwable e) {
                // A bug here must cost the adaptation, never the program.
                fail(null, "internal error (" + e + ")");
                return;
            }
        }
    }

    /** Steps 2 and 3: one look at the counts, and the classes that reached the threshold. */
    private void round() {
        for (String t; (t = tables.poll()) != null;) read(t);
        if (chords.isEmpty()) return;
        List<Chords> all = new ArrayList<Chords>(chords.values());
        int n = 0;
        for (Chords m : all) n += m.edges.length;
        int[] ids = new int[n];
        n = 0;
        for (Chords m : all) {
            for (int k = 0; k < m.edges.length; k++) ids[n++] = m.first + k;
        }
        Arrays.sort(ids);
        long[] totals = Ledger.totals(ids);
        Map<Class<?>, List<Chords>> byClass = new IdentityHashMap<Class<?>, List<Chords>>();
        Map<Class<?>, Long> sums = new IdentityHashMap<Class<?>, Long>();
        for (Chords m : all) {
            long sum = 0;
            Class<?> c = null;
            for (int k = 0; k < m.edges.length; k++) {
                long got = totals[Arrays.binarySearch(ids, m.first + k)];
                sum += got;
                if (got > 0 && c == null) c = Ledger.countedBy(m.first + k);
            }
            if (c == null) continue;
            if (done.containsKey(c)) {
                chords.remove(m.first);
                continue;
            }
            List<Chords> l = byClass.get(c);
            if (l == null) byClass.put(c, l = new ArrayList<Chords>());
            l.add(m);
            Long had = sums.get(c);
            sums.put(c, (had == null ? 0 : had) + sum);
        }
        for (Map.Entry<Class<?>, Long> e : sums.entrySet()) {
            if (stopped) return;
            if (e.getValue() >= after) adapt(e.getKey(), byClass.get(e.getKey()), ids, totals);
        }
    }

    /** Reads the chord counters' lines: "site ID edge FROM>TO I/N HASH SEMANTICS METHOD OFFSET LINE". */
    private void read(String lines) {
        for (String line : lines.split("\n")) {
            String[] f = line.split("\t");
            if (f.length < 5 || !f[0].equals("site") || !f[2].equals("edge")) continue;
            String[] w = f[3].split(" ");
            int slash = w.length < 3 ? -1 : w[1].indexOf('/');
            int paren = f[4].indexOf('(');
            int dot = paren < 0 ? -1 : f[4].lastIndexOf('.', paren);
            if (slash < 0 || dot < 0) continue;
            try {
                int id = Integer.parseInt(f[1]), i = Integer.parseInt(w[1].substring(0, slash)), n = Integer.parseInt(w[1].substring(slash + 1));
                if (i < 0 || i >= n) continue;
                Chords m = chords.get(id - i);
                if (m == null) chords.put(id - i, m = new Chords(f[4].substring(0, dot), f[4].substring(dot + 1), w[2], id - i, n));
                if (m.edges.length == n) m.edges[i] = w[0];
            } catch (NumberFormatException e) {
                // not a line of ours: left out of the profile
            }
        }
    }

    /** Step 3: class c's profile, and its retransformation; step 4's reporting. */
    private void adapt(Class<?> c, List<Chords> methods, int[] ids, long[] totals) {
        done.put(c, Boolean.TRUE);
        StringBuilder p = new StringBuilder();
        for (Chords m : methods) {
            chords.remove(m.first);
            if (Arrays.asList(m.edges).contains(null)) continue; // a line missing: no profile
            p.append("edges\t").append(m.cls).append('\t').append(m.method).append('\t').append(m.hash).append('\t');
            for (int k = 0; k < m.edges.length; k++) {
                if (k > 0) p.append(' ');
                p.append(m.edges[k]).append('=').append(totals[Arrays.binarySearch(ids, m.first + k)]);
            }
            p.append('\n');
        }
        if (p.length() == 0) return;
        outcome = null;
        profiles.put(c, p.toString());
        String failure;
        try {
            inst.retransformClasses(c);
            failure = outcome == null ? "the transformer was not called" : outcome.isEmpty() ? null : outcome;
        } catch (Throwable e) {
            failure = "the JVM refused the new code (" + e + ")";
        }
        if (failure != null) {
            profiles.remove(c);
            fail(c, failure);
        } else {
            adapted++;
            System.setProperty("heapledger.agent.adapted", String.valueOf(adapted));
            if (verbose) Agent.warn("--adapt: " + c.getName() + " re-instrumented from " + methods.size() + " methods' edge counts");
            header();
        }
    }

    private void fail(Class<?> c, String why) {
        failed++;
        String what = (c == null ? "re-instrumentation stopped" : c.getName() + " keeps its profiling counters") + ": " + why;
        if (firstFailure == null) {
            firstFailure = what;
            Agent.warn("--adapt: " + what + " (further failures are counted in the snapshot header line adapted)");
        }
        header();
    }

    private void header() {
        Ledger.header("adapted", adapted + " classes re-instrumented from their edge counts after " + after + " chord increments; "
                + failed + " failed" + (firstFailure == null ? "" : " (first: " + firstFailure + ")"));
    }

    /** Forgets the kept bytes of a class once it is re-instrumented. */
    void forget(String className, String loader) {
        current.remove(className + "@" + loader);
    }
}
