package heapledger.rt;

import java.lang.ref.WeakReference;

/**
 * The java.lang.Object.&lt;init&gt; hook (the agent's --object-init; docs/agent.md): once the
 * agent has retransformed Object, every constructor chain calls {@link #constructed}, so objects
 * made by reflection, JNI's NewObject, deserialization and JDK code that no rewritten site sees
 * are counted too. Arrays, Class objects, clone() and Unsafe.allocateInstance run no
 * constructor and are not seen here (the paper "Aggregated accounting of memory usage in Java",
 * section 5).
 *
 * <p>What it counts: one site of kind "init" per class ("&lt;Object.&lt;init&gt;&gt;"), charged to
 * the account the thread has when Object.&lt;init&gt; runs — the caller's, because a rewritten
 * constructor switches account only after its own super() call. These rows are a second view of
 * the same objects, never added into the rows of rewritten sites: the objects no rewritten site
 * counted are, per account and class, the init row minus the rows of object sites of that
 * class. Objects of heapledger's own classes are never counted.
 *
 * <p>Object.&lt;init&gt; runs during class loading, inside the runtime and inside this hook, so:
 * <ul>
 * <li>nothing happens until {@link #engage} (a volatile read, then return);
 * <li>a per-thread guard, reached without allocating: a thread's first call registers it (its
 * ThreadLocal, its Acct) while it is listed in ENTERING, a copy-on-write array that
 * objects constructed meanwhile are checked against; later calls find their guard in a
 * direct-mapped cache by identity hash. Everything the hook allocates while its guard is set —
 * the guard, table entries, site names — is not counted and cannot recurse;
 * <li>it never throws: a failure is counted in the snapshot's "dropped";
 * <li>its locks are its own and held only around plain array work; table lines are defined
 * outside them, so it cannot close a cycle with the class-loading locks of the thread it runs on.
 * </ul>
 */
public final class ObjectHook {
    private ObjectHook() {}

    private static volatile boolean engaged;
    /** Engaged at some time: guards may be set, and resume must clear them even after a detach. */
    private static volatile boolean everEngaged;

    /** Threads registering with the hook right now. */
    private static final ThreadList ENTERING = new ThreadList();

    /** Per-thread guard, cached by the thread's identity hash; a miss looks it up in GUARD. */
    private static final Guard[] CACHE = new Guard[4096];

    private static final ThreadLocal<Guard> GUARD = new ThreadLocal<Guard>() {
        @Override
        protected Guard initialValue() {
            return new Guard(Thread.currentThread());
        }
    };

    static final class Guard {
        final WeakReference<Thread> thread;
        boolean busy;
        /** The last class this thread constructed and its entry: a program constructs runs of one class. */
        Entry last;

        Guard(Thread t) {
            thread = new WeakReference<Thread>(t);
        }
    }

    /** A class and the site its objects count into (-1: never counted). Final fields: safely published. */
    static final class Entry {
        final Class<?> type;
        final int site;
        final int epoch; // the engage it belongs to: a later engage starts a new range

        Entry(Class<?> type, int site) {
            this.type = type;
            this.site = site;
            this.epoch = ObjectHook.epoch;
        }
    }

    /** Counts engages, so an entry cached in a guard is not used past the range it came from. */
    private static volatile int epoch;

    private static final Object LOCK = new Object();
    private static volatile Entry[] table = new Entry[1024];
    private static int used; // under LOCK
    private static int first, next, last, overflow; // the reserved site range, under LOCK
    private static volatile boolean overflowWarned;

    /**
     * Starts counting into the reserved sites [firstSite, firstSite + sites): the last one takes
     * every class past the others. Called by the agent before it retransforms Object; calling it
     * again (an attach after a detach) starts a new range and forgets the old classes.
     */
    public static void engage(int firstSite, int sites) {
        if (sites < 2) throw new IllegalArgumentException("the Object.<init> hook needs at least 2 sites, got " + sites);
        synchronized (LOCK) {
            epoch++;
            table = new Entry[1024];
            used = 0;
            first = firstSite;
            next = firstSite;
            last = firstSite + sites - 2;
            overflow = firstSite + sites - 1;
            overflowWarned = false;
        }
        // Everything the hook's path needs, loaded and initialised now, not inside a constructor
        // that is part of loading some other class.
        Ledger.here();
        GUARD.get();
        new Entry(Object.class, -1).getClass();
        System.identityHashCode(Thread.currentThread());
        entryOf(Guard.class, null);
        everEngaged = true;
        engaged = true;
    }

    /** Stops counting (detach; the agent restores Object's original code). */
    public static void disengage() {
        engaged = false;
    }

    public static boolean engaged() {
        return engaged;
    }

    /**
     * Keeps the hook from counting what the calling thread constructs until {@link #resume}: the
     * agent's own work on a program's thread (the transformer, attach, detach). Returns what
     * resume restores.
     */
    public static boolean pause() {
        if (!engaged) return false;
        Guard g = guard(Thread.currentThread());
        if (g == null) return false;
        boolean was = g.busy;
        g.busy = true;
        return was;
    }

    public static void resume(boolean was) {
        if (!everEngaged) return;
        Guard g = guard(Thread.currentThread());
        if (g != null) g.busy = was;
    }

    /** Called first thing in java.lang.Object's constructor, with the object under construction. */
    public static void constructed(Object o) {
        if (!engaged) return;
        Guard g;
        try {
            g = guard(Thread.currentThread());
        } catch (Throwable e) {
            return; // no guard, no counting: dropping one object beats recursing
        }
        if (g == null || g.busy) return;
        g.busy = true;
        try {
            count(g, o);
        } catch (Throwable e) {
            Ledger.drop(e);
        } finally {
            g.busy = false;
        }
    }

    /** The calling thread's guard, or null while the thread is registering (its own objects). */
    private static Guard guard(Thread t) {
        if (ENTERING.contains(t)) return null;
        Guard[] c = CACHE;
        int i = System.identityHashCode(t) & (c.length - 1);
        Guard g = c[i];
        if (g != null && g.thread.get() == t) return g;
        return register(t, i);
    }

    /**
     * First call of a thread, or its cache slot taken by another thread: what runs here
     * constructs objects (the thread local's map and entry, the guard, the runtime's Acct), which
     * come back to the hook and are let through by the entering list.
     */
    private static Guard register(Thread t, int slot) {
        ENTERING.add(t);
        try {
            Ledger.here(); // registered with the runtime now, so count() never allocates for it
            Guard g = GUARD.get();
            CACHE[slot] = g;
            return g;
        } finally {
            ENTERING.remove(t);
        }
    }

    private static void count(Guard g, Object o) {
        Class<?> c = o.getClass();
        // The account first: a class's first sight runs JDK code (its name, the table line),
        // which under --jdk is rewritten, and whose sites would set the thread's account to
        // theirs and count the hook's own objects; that work counts where nobody reads.
        Acct a = Ledger.here();
        int account = a.account;
        Entry e = g.last;
        if (e == null || e.type != c || e.epoch != epoch) {
            e = find(table, c);
            if (e == null) {
                Acct prev = Ledger.mute();
                try {
                    e = assign(c, o);
                } finally {
                    Ledger.unmute(prev);
                }
            }
            g.last = e;
        }
        if (e.site < 0) return;
        long key = Counts.key(account, e.site, 0);
        long n = a.counts.add(key, 1, 0, 0);
        if (Context.ON) Context.count(a, key, 1, 0, 0);
        if (Live.MODE != Live.OFF) Live.track(o, key, n, 1, 0, 0);
    }

    /** The entry of class c, its site assigned on first sight; o (when given) gives the size model its class. */
    static Entry entryOf(Class<?> c, Object o) {
        Entry e = find(table, c);
        return e != null ? e : assign(c, o);
    }

    private static Entry find(Entry[] t, Class<?> c) {
        int mask = t.length - 1;
        for (int i = System.identityHashCode(c) & mask; ; i = (i + 1) & mask) {
            Entry e = t[i];
            if (e == null || e.type == c) return e;
        }
    }

    private static Entry assign(Class<?> c, Object o) {
        String name = c.getName();
        boolean own = c.getClassLoader() == null && (name.startsWith("heapledger.rt.") || name.startsWith("heapledger.agent."));
        int site;
        String line = null;
        boolean warn = false;
        Entry made;
        synchronized (LOCK) {
            Entry known = find(table, c);
            if (known != null) return known;
            if (own || first == 0) {
                site = -1;
            } else if (next <= last) {
                site = next++;
                line = "site\t" + site + "\tinit\t" + name + "\t<Object.<init>>\t-1\t-1\n";
            } else {
                site = overflow;
                if (!overflowWarned) {
                    overflowWarned = true;
                    warn = true;
                    line = "site\t" + site + "\tinit\t(other classes: more than " + (last - first + 1) + ")\t<Object.<init>>\t-1\t-1\n";
                }
            }
            made = new Entry(c, site);
            insert(made);
        }
        if (line != null) Ledger.defineTable(line);
        if (warn) {
            Snapshots.warn("the Object.<init> hook has used its " + (last - first + 1) + " sites; objects of further classes are counted together in site "
                    + overflow + " (bytes unknown)");
        }
        if (o != null && site >= 0 && site != overflow) Ledger.noteClass(site, o);
        return made;
    }

    /** Under LOCK. Grows at half full, so probes stay short; readers see the old or the new array. */
    private static void insert(Entry e) {
        Entry[] t = table;
        if ((used + 1) * 2 > t.length) {
            Entry[] bigger = new Entry[t.length * 2];
            for (Entry x : t) {
                if (x != null) put(bigger, x);
            }
            t = bigger;
        }
        put(t, e);
        used++;
        table = t;
    }

    private static void put(Entry[] t, Entry e) {
        int mask = t.length - 1;
        int i = System.identityHashCode(e.type) & mask;
        while (t[i] != null) i = (i + 1) & mask;
        t[i] = e;
    }
}
