package heapledger.probe;

import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.Charset;

/**
 * The runtime that heapledger's {@code probe} pass calls. The pass proves the rewriting machinery:
 * every method of a rewritten class calls {@link #enter()} on entry, {@link #exit(int)} before every
 * return, {@link #unwind(int)} from a handler covering the whole body before the exception is
 * rethrown, {@link #alloc()} after every {@code new} and {@link #array(Object)} after every array
 * creation. For a program that ends normally every entry is matched by an exit or an unwind, so
 * {@code entries == exits + unwinds} and each token handed back equals the one entered: those two
 * facts check the rewriting of every return path and exception path that actually ran. A program
 * that calls {@code System.exit} still has frames on its threads' stacks; the report counts them
 * as {@code live}, so {@code entries == exits + unwinds + live} holds for every program.
 *
 * <p>Counting must not change the program: nothing here throws into the caller, allocates on the
 * counting paths after the thread's first call, takes a lock, or prints. Counts go to a file only
 * when the system property {@code heapledger.probe.report} names one, written by a shutdown hook.
 *
 * <p>Counters are per thread (no contention, no atomic operations on the hot path) and summed at
 * exit from a registry that each thread joins once. Java 8 bytecode, no dependencies.
 */
public final class Probe {
    private Probe() {}

    /** One thread's counts. Only its own thread writes; the shutdown hook reads. */
    static final class Counts {
        long entries, exits, unwinds, allocs, arrays, mismatches;
        int depth;
        Counts next; // registry link, written once before publication
    }

    private static final Object registryLock = new Object();
    private static Counts registry; // guarded by registryLock

    private static final ThreadLocal<Counts> local = new ThreadLocal<Counts>() {
        @Override
        protected Counts initialValue() {
            Counts c = new Counts();
            synchronized (registryLock) {
                c.next = registry;
                registry = c;
            }
            return c;
        }
    };

    static {
        try {
            final String path = System.getProperty("heapledger.probe.report");
            if (path != null && path.length() > 0) {
                Runtime.getRuntime().addShutdownHook(new Thread("heapledger-probe-report") {
                    @Override
                    public void run() {
                        write(path);
                    }
                });
            }
        } catch (Throwable t) {
            // A security manager or a JVM already shutting down: count without reporting.
        }
    }

    /** Method entry; returns the call depth before this call, which the method passes back. */
    public static int enter() {
        try {
            Counts c = local.get();
            c.entries++;
            return c.depth++;
        } catch (Throwable t) {
            return -1;
        }
    }

    /** Normal return of a method that entered with {@code token}. */
    public static void exit(int token) {
        leave(token, false);
    }

    /** Exceptional exit of a method that entered with {@code token}; the exception is rethrown. */
    public static void unwind(int token) {
        leave(token, true);
    }

    private static void leave(int token, boolean exceptional) {
        try {
            Counts c = local.get();
            if (exceptional) {
                c.unwinds++;
            } else {
                c.exits++;
            }
            if (token != c.depth - 1) {
                c.mismatches++;
            }
            // Resynchronise on the caller's token so one bad pair is counted once, not forever.
            c.depth = token < 0 ? 0 : token;
        } catch (Throwable t) {
            // never into the application
        }
    }

    /** After {@code new}: the object is not yet initialised, so it cannot be passed. */
    public static void alloc() {
        try {
            local.get().allocs++;
        } catch (Throwable t) {
            // never into the application
        }
    }

    /** After {@code newarray}, {@code anewarray} and {@code multianewarray}. */
    public static void array(Object a) {
        try {
            local.get().arrays++;
        } catch (Throwable t) {
            // never into the application
        }
    }

    /**
     * Totals over all threads, in the order entries, exits, unwinds, allocs, arrays, mismatches,
     * live (methods entered and not yet left).
     */
    public static long[] totals() {
        long[] t = new long[7];
        Counts c;
        synchronized (registryLock) {
            c = registry;
        }
        for (; c != null; c = c.next) {
            t[0] += c.entries;
            t[1] += c.exits;
            t[2] += c.unwinds;
            t[3] += c.allocs;
            t[4] += c.arrays;
            t[5] += c.mismatches;
            t[6] += c.depth;
        }
        return t;
    }

    static void write(String path) {
        long[] t = totals();
        StringBuilder sb = new StringBuilder();
        sb.append("entries ").append(t[0]).append('\n');
        sb.append("exits ").append(t[1]).append('\n');
        sb.append("unwinds ").append(t[2]).append('\n');
        sb.append("allocs ").append(t[3]).append('\n');
        sb.append("arrays ").append(t[4]).append('\n');
        sb.append("mismatches ").append(t[5]).append('\n');
        sb.append("live ").append(t[6]).append('\n');
        Writer w = null;
        try {
            w = new OutputStreamWriter(new FileOutputStream(path), Charset.forName("UTF-8"));
            w.write(sb.toString());
        } catch (Throwable e) {
            System.err.println("heapledger probe: cannot write report " + path + ": " + e);
        } finally {
            if (w != null) {
                try {
                    w.close();
                } catch (Throwable e) {
                    // already reported or nothing to report
                }
            }
        }
    }
}
