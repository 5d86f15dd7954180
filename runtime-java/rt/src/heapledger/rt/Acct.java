package heapledger.rt;

import java.lang.ref.WeakReference;

/**
 * One thread's accounting state. Rewritten code fetches it once per method entry
 * ({@link Ledger#here()}), keeps it in a local, saves and sets {@link #account} directly, and
 * passes it to the counting methods below, so the thread-local lookup is paid once per method
 * and never per allocation.
 *
 * <p>The counting methods are called after an allocation has succeeded (after the constructor
 * returned, for objects), so a failed allocation is never counted. They never throw: an
 * internal failure is counted in {@link Ledger#dropped} and reported in the snapshot.
 */
public final class Acct {
    /** The account allocations of this thread are charged to; 0 is {@code <unaccounted>}. */
    public int account;

    /**
     * Counters by site, for (account, site, part 0), in pages of PAGE sites: SLOT longs each,
     * the owner ({@link #owner}: the page's number and the account; 0 when free), count,
     * elements, bytes, and after the last slot the page's number + 1. A site's slot belongs to
     * the first account this thread counts there; other accounts at that site, and part 1 of a
     * multianewarray, go to {@link #counts}. Indexing beats any hash: on sunflow, probing a hash
     * table per allocation took a quarter of all samples, a direct index a few percent.
     *
     * <p>Site IDs are sparse: each separately rewritten jar numbers its sites from its own base
     * anywhere below 2^31 (docs/formats.md, "Site IDs"). So a page sits at its number modulo the
     * directory's length, a power of two, and the owner a fast path compares holds the page's
     * number too: one comparison still decides the fast path, and a page in another's place
     * simply does not match. The directory doubles when two pages a thread uses meet (the pages
     * of one jar never meet each other, being consecutive) up to MAX_DIRECTORY; past that, a
     * page that finds its place taken counts through {@link #counts}.
     */
    long[][] pages = NO_PAGES;

    /** (account, site, part) totals that have no direct slot. */
    final Counts counts = new Counts();

    /** slow()'s length for an array whose type is not known at the call. */
    private static final int ANY_ARRAY = -2;

    static final int PAGE_BITS = 5, PAGE = 1 << PAGE_BITS, PAGE_MASK = PAGE - 1, SLOT = 4;
    /** Where a page keeps its number + 1, after its last slot. */
    private static final int TAG = PAGE * SLOT;
    /** The most pages a thread's directory holds: 64 KB of references. */
    static final int MAX_DIRECTORY = 1 << 14;
    /**
     * The agent's --adapt N (its config line, the property heapledger.adapt.after), 0 without
     * it: a path counter whose count on a thread reaches it on path's fast path wakes the agent's
     * re-instrumenting thread at once (adaptReached), instead of leaving its class profiling
     * until that thread's next look. One counter at N means its class counted at least N
     * increments, so the class is due; the looks remain for the rest (increments spread over
     * counters or threads, counts kept apart in the thread's table). Counts start at 1, so
     * without --adapt no count ever equals it.
     */
    static final long ADAPT_AFTER = adaptAfter();
    /** The agent's re-instrumenting thread, which adaptReached wakes; null without the agent's --adapt. */
    private static volatile Thread adaptWaiter;

    private static long adaptAfter() {
        try {
            return Math.max(0L, Long.parseLong(System.getProperty("heapledger.adapt.after", "0").trim()));
        } catch (RuntimeException e) {
            return 0; // the agent says so when it reads the same property (Adapt.threshold)
        }
    }

    /**
     * Stands for a page not yet made: its owners are all 0, so no fast path ever matches it and
     * only page() writes a page. With it the fast paths need no null test of the page, one
     * branch less at every site the JIT inlines them into.
     */
    private static final long[] EMPTY = new long[TAG + 1];
    private static final long[][] NO_PAGES = {EMPTY};

    /**
     * What the slot of site holds when account owns it: the site's page number above, the
     * account + 1 below (never 0). Inlined into the fast paths, where the site is a constant.
     */
    static long owner(int site, int account) {
        return (long) (site >>> PAGE_BITS) << 32 | (account + 1L);
    }
    final WeakReference<Thread> owner;
    /** The owner's Thread.getId(), which the JVM never reuses: identifies it without keeping it alive. */
    final long tid;
    final String threadName;
    /** A private state (Ledger.mute, Quiet): the runtime's own work; liveness tracks none of its objects. */
    boolean quiet;

    /**
     * The thread's current calling context (--context cct): rewritten methods enter theirs on
     * entry and put the one they replaced back on every exit (Context). The root otherwise.
     */
    public Context node = Context.root();
    /** Root of this thread's tree, for snapshots. */
    final Context root = node;
    /** Nodes in this thread's tree, and calls the bounds kept out of it (Context.child). */
    int nodes;
    long depthCut, nodeCut;
    /** Account switches this thread ran or had left out (--count-increments, Switches); null before its first. */
    volatile Counts switches;

    Acct(Thread t) {
        owner = new WeakReference<Thread>(t);
        tid = t.getId();
        threadName = t.getName();
    }

    boolean alive() {
        Thread t = owner.get();
        return t != null && t.isAlive();
    }

    /**
     * Adds to the totals of (account, site, part 0) and returns its new count (liveness
     * sampling uses it). Only the owning thread calls it, so it needs no lock.
     */
    long add(int account, int site, long count, long elements, long bytes) {
        // With liveness 'all' every allocation must reach the slow path, which tracks it; no
        // slot is ever claimed then, so the fast paths never match.
        long[] p = site >= 0 && Live.MODE != Live.ALL ? page(site) : null;
        if (p != null) {
            int i = (site & PAGE_MASK) * SLOT;
            long own = owner(site, account);
            if (p[i] == 0) p[i] = own;
            if (p[i] == own) {
                p[i + 2] += elements;
                p[i + 3] += bytes;
                if (Context.ON) Context.count(this, Counts.key(account, site, 0), count, elements, bytes);
                return p[i + 1] += count;
            }
        }
        if (Context.ON) Context.count(this, Counts.key(account, site, 0), count, elements, bytes);
        return counts.add(Counts.key(account, site, 0), count, elements, bytes);
    }

    /** The page of site, made if need be; null when its place is another's for good. */
    long[] page(int site) {
        int number = site >>> PAGE_BITS;
        while (true) {
            long[][] pg = pages;
            int at = number & (pg.length - 1);
            long[] p = pg[at];
            if (p == EMPTY) {
                if (pg == NO_PAGES) pages = pg = new long[][] {EMPTY}; // shared by every thread: never written
                p = new long[TAG + 1];
                p[TAG] = number + 1L;
                pg[at] = p;
                return p;
            }
            if (p[TAG] == number + 1L) return p;
            if (pg.length >= MAX_DIRECTORY) return null;
            grow();
        }
    }

    /**
     * Doubles the directory. Pages apart at one length are apart at the next, so none meets
     * another; the new directory is published complete, so a snapshot reader sees old or new.
     */
    private void grow() {
        long[][] pg = pages;
        long[][] bigger = new long[pg.length * 2][];
        java.util.Arrays.fill(bigger, EMPTY);
        for (long[] p : pg) {
            if (p != EMPTY) bigger[(int) (p[TAG] - 1) & (bigger.length - 1)] = p;
        }
        pages = bigger;
    }

    /** Adds every total of this thread, direct slots and table, into into (snapshot merge). */
    void addTo(Counts into) {
        into.addAll(counts);
        for (long[] p : pages) {
            if (p == null || p == EMPTY) continue; // null: a directory published before its fill is seen
            int first = (int) (p[TAG] - 1) << PAGE_BITS;
            for (int i = 0; i < TAG; i += SLOT) {
                long owner = p[i];
                // A slot claimed but not yet added to (the owner is between the two) has nothing to say.
                if (owner == 0 || p[i + 1] == 0) continue;
                int account = (int) ((owner & 0xFFFFFFFFL) - 1);
                into.add(Counts.key(account, first + i / SLOT, 0), p[i + 1], p[i + 2], p[i + 3]);
            }
        }
    }

    // ---- objects ----

    /** An object, fully constructed, allocated at site and charged to the thread's account. */
    public static void object(Object o, Acct t, int site) {
        count(o, t, t.account, site);
    }

    /**
     * An object, fully constructed, allocated at site and charged to account, by a method that
     * fetched the thread's state t on entry (full switching, or '*' in a method with sites in a
     * loop or several sites), so t is never null here. Its class gives the site's size.
     * The fast path is inlined at every site: see {@link #object(Object, Acct, int, int)}.
     */
    public static void count(Object o, Acct t, int account, int site) {
        long[][] pg = t.pages;
        long[] p;
        int i = (site & PAGE_MASK) * SLOT;
        if (o != null && !(Budget.MAY_THROW && Budget.anyThrowing)
                && (p = pg[site >>> PAGE_BITS & pg.length - 1])[i] == owner(site, account)) {
            long n = ++p[i + 1];
            if (t.account != account) t.account = account;
            if (Context.ON) Context.object(t, account, site);
            if (Live.MODE == Live.SAMPLE && n % Live.RATE == 0) sampled(o, account, site, n, 0, 0);
            return;
        }
        slow(Live.MODE == Live.OFF ? null : o, o == null ? null : o.getClass(), t, account, site, -1, 0);
    }

    /**
     * An object of class c allocated at site when the reference is not at hand (new X;
     * invokespecial X.&lt;init&gt; with no dup: Scala's and Kotlin's singletons); the class gives the
     * site its size.
     */
    public static void object(Class<?> c, Acct t, int site) {
        try {
            if (SiteClasses.get(site) == null) SiteClasses.put(site, c);
            t.add(t.account, site, 1, 0, 0);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    /** As {@link #object(Class, Acct, int)}, the account fixed ('*'). */
    public static Acct object(Class<?> c, Acct t, int account, int site) {
        try {
            if (SiteClasses.get(site) == null) SiteClasses.put(site, c);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
        return object(t, account, site);
    }

    /** An object allocated at site when the reference is not at hand, its class not named (class files before version 49). */
    public static void object(Acct t, int site) {
        try {
            t.add(t.account, site, 1, 0, 0);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    // ---- one-dimensional arrays: one overload per element type so the length is read
    // without reflection ----

    public static void array(boolean[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 1); }
    public static void array(byte[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 1); }
    public static void array(char[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 2); }
    public static void array(short[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 2); }
    public static void array(int[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 4); }
    public static void array(float[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 4); }
    public static void array(long[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 8); }
    public static void array(double[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, 8); }
    public static void array(Object[] a, Acct t, int site) { fast(a, t, t.account, site, a.length, Sizes.REF); }

    // As count(Object, ...): t fetched on entry, account given.
    public static void count(boolean[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 1); }
    public static void count(byte[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 1); }
    public static void count(char[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 2); }
    public static void count(short[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 2); }
    public static void count(int[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 4); }
    public static void count(float[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 4); }
    public static void count(long[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 8); }
    public static void count(double[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, 8); }
    public static void count(Object[] a, Acct t, int account, int site) { fast(a, t, account, site, a.length, Sizes.REF); }

    /** An array whose static type is not known at the call (e.g. Array.newInstance, clone()). */
    public static void anyArray(Object a, Acct t, int site) {
        slow(a, null, t, t.account, site, ANY_ARRAY, 0);
    }

    private static void fast(Object a, Acct t, int account, int site, int length, int elementSize) {
        long[][] pg = t.pages;
        long[] p;
        int i = (site & PAGE_MASK) * SLOT;
        if (!(Budget.MAY_THROW && Budget.anyThrowing)
                && (p = pg[site >>> PAGE_BITS & pg.length - 1])[i] == owner(site, account)) {
            long bytes = Sizes.array(length, elementSize);
            long n = ++p[i + 1];
            p[i + 2] += length;
            p[i + 3] += bytes;
            if (t.account != account) t.account = account;
            if (Context.ON) Context.array(t, account, site, length, bytes);
            if (Live.MODE == Live.SAMPLE && n % Live.RATE == 0) sampled(a, account, site, n, length, bytes);
            return;
        }
        slow(Live.MODE == Live.OFF ? null : a, null, t, account, site, length, elementSize);
    }

    // ---- every class accounted (--accounts '*') ----
    // A site's account is fixed at rewrite time, so it comes with the call; the thread's state
    // is fetched by the first counting call a method invocation reaches (t is null until then)
    // and handed back for the method to keep. A method whose sites are not reached pays nothing,
    // one that is pays one lookup per invocation. The thread's account is still set to the
    // site's, as with full switching, for code rewritten without '*' that inherits it.

    public static Acct object(Object o, Acct t, int account, int site) {
        // The fast path is inlined at every site, so its bytecode is kept small: the JIT charges
        // every inlined byte, dead branches included, against the caller's inlining budget.
        // Without liveness the new object goes no further than its class, so the compiler can
        // still scalar-replace an allocation that does not escape. It is taken when the site has
        // this thread's direct slot for account, which only the slow path claims (after noting
        // the site's class, and never with liveness 'all'); with sampled liveness it also serves
        // the allocations not sampled. The first site a method invocation reaches fetches the
        // thread's state here too, so a method with one allocation (the common case) never
        // leaves the fast path.
        if (o != null) {
            // The state first: Ledger's initialisation initialises Budget, whose MAY_THROW
            // reads settings; read here first, it would start that on the program's thread in
            // the middle of a count.
            Acct a = t != null ? t : Ledger.current();
            long[][] pg = a.pages;
            long[] p;
            int i = (site & PAGE_MASK) * SLOT;
            if (!(Budget.MAY_THROW && Budget.anyThrowing)
                    && (p = pg[site >>> PAGE_BITS & pg.length - 1])[i] == owner(site, account)) {
                long n = ++p[i + 1];
                if (a.account != account) a.account = account; // cheaper than a store per allocation
                if (Context.ON) Context.object(a, account, site);
                if (Live.MODE == Live.SAMPLE && n % Live.RATE == 0) sampled(o, account, site, n, 0, 0);
                return a;
            }
        }
        return slow(Live.MODE == Live.OFF ? null : o, o == null ? null : o.getClass(), t, account, site, -1, 0);
    }

    /**
     * Sets the thread's account before a constructor runs, for the Object.&lt;init&gt; hook (the
     * agent's --object-init), when every class is accounted and methods do not switch: the
     * hook then charges what the site counting the object after it does. t may be null (not
     * fetched yet); the state is returned for the method to keep.
     */
    public static Acct charge(Acct t, int account) {
        Acct a = t != null ? t : Ledger.current();
        a.account = account;
        return a;
    }

    /** Tracks a sampled allocation counted on a fast path. */
    private static void sampled(Object o, int account, int site, long n, long elements, long bytes) {
        try {
            Live.track(o, Counts.key(account, site, 0), n, 1, elements, bytes);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    /**
     * The slow path of {@link #object(Object, Acct, int, int)} and the array fast paths: the
     * thread's first allocation at a site, liveness 'all', an armed budget, a null clone().
     * length -1 is an object of class c, {@link #ANY_ARRAY} an array whose type only o tells
     * (o is then always passed), otherwise an array of length elements of elementSize bytes.
     * Otherwise o is the allocation, passed only when liveness may track it.
     *
     * <p>It is one method, not a few small ones, and larger than the JIT's FreqInlineSize (325
     * bytes of bytecode) on purpose: its call sits in the fast paths that are inlined at every
     * site, and the profile the JIT reads there is shared by all sites. Early in a run, when the
     * first allocation at each site comes here, that call looks hot, and a smaller slow path
     * would be inlined at every site, using up the inlining budget of the program's own hot
     * methods (on sunflow, 141 inlined copies and 39 program methods left out). RuntimeSizeTest
     * checks both sizes.
     */
    private static Acct slow(Object o, Class<?> c, Acct t, int account, int site, int length, int elementSize) {
        // A thread without state here is a '*' method's first site; full switching always has one.
        try {
            if (t == null) t = Ledger.here();
            t.account = account;
            long bytes = 0, elements = 0;
            if (length == ANY_ARRAY) {
                // clone() of an array, Array.newInstance: the type is known only now.
                Class<?> e = o.getClass().getComponentType();
                elements = java.lang.reflect.Array.getLength(o);
                bytes = Sizes.array((int) elements, e.isPrimitive() ? Sizes.element(primitiveChar(e)) : Sizes.REF);
                if (Live.MODE == Live.OFF) o = null;
            } else if (length >= 0) {
                elements = length;
                bytes = Sizes.array(length, elementSize);
            } else {
                // A clone() that returned null: dropped, as with full switching.
                if (c == null) throw new NullPointerException("no object at site " + site);
                // The site's class for the size model, as Ledger.noteClass but from the class,
                // so the object need not escape.
                if (SiteClasses.get(site) == null) SiteClasses.put(site, c);
            }
            // The site's direct slot, claimed here for the fast paths (as add() does), so that they
            // find it next time; never with liveness 'all', whose every allocation comes here.
            long n;
            long[] p = null;
            int i = (site & PAGE_MASK) * SLOT;
            if (site >= 0 && Live.MODE != Live.ALL && (p = t.page(site)) != null) {
                long own = owner(site, account);
                if (p[i] == 0) p[i] = own;
                if (p[i] != own) p = null;
            }
            if (p != null) {
                p[i + 2] += elements;
                p[i + 3] += bytes;
                n = ++p[i + 1];
            } else {
                n = t.counts.add(Counts.key(account, site, 0), 1, elements, bytes);
            }
            if (Context.ON) Context.count(t, Counts.key(account, site, 0), 1, elements, bytes);
            if (o != null) Live.track(o, Counts.key(account, site, 0), n, 1, elements, bytes);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
        if (Budget.anyThrowing) Budget.enforce(account);
        return t;
    }

    public static Acct object(Acct t, int account, int site) {
        try {
            if (t == null) t = Ledger.here();
            t.account = account;
            t.add(account, site, 1, 0, 0);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
        return t;
    }

    public static Acct array(boolean[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 1); }
    public static Acct array(byte[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 1); }
    public static Acct array(char[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 2); }
    public static Acct array(short[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 2); }
    public static Acct array(int[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 4); }
    public static Acct array(float[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 4); }
    public static Acct array(long[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 8); }
    public static Acct array(double[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, 8); }
    public static Acct array(Object[] a, Acct t, int account, int site) { return one(a, t, account, site, a.length, Sizes.REF); }

    public static Acct anyArray(Object a, Acct t, int account, int site) {
        return slow(a, null, t, account, site, ANY_ARRAY, 0);
    }

    private static Acct one(Object a, Acct t, int account, int site, int length, int elementSize) {
        // As object(): a small fast path in the site's direct slot; the array itself is passed on
        // only for liveness.
        {
            Acct h = t != null ? t : Ledger.current(); // before Budget: see object()
            long[][] pg = h.pages;
            long[] p;
            int i = (site & PAGE_MASK) * SLOT;
            if (!(Budget.MAY_THROW && Budget.anyThrowing)
                    && (p = pg[site >>> PAGE_BITS & pg.length - 1])[i] == owner(site, account)) {
                long bytes = Sizes.array(length, elementSize);
                long n = ++p[i + 1];
                p[i + 2] += length;
                p[i + 3] += bytes;
                if (h.account != account) h.account = account;
                if (Context.ON) Context.array(h, account, site, length, bytes);
                if (Live.MODE == Live.SAMPLE && n % Live.RATE == 0) sampled(a, account, site, n, length, bytes);
                return h;
            }
        }
        return slow(Live.MODE == Live.OFF ? null : a, null, t, account, site, length, elementSize);
    }

    // ---- sites of account-neutral methods (rewrite/passes/neutral.go) ----
    // A method that needs no account switch although it allocates charges its sites to its
    // class's account and leaves the thread's account as its caller left it: its callers may
    // run in another account, which code they call after it must still be charged to. t is
    // null when the method did not fetch the state on entry (one site, no loop: as a '*'
    // method's lazy fetch); it is not handed back, since such a method reaches one site.
    // These are copies of count's and fast's fast paths without the store, not those calls
    // wrapped in a save and restore: that would put a load, a store and a handler at every
    // site the JIT inlines them into, where the point of leaving out the switch is to have none.

    /** An object, fully constructed, allocated at site and charged to account; the thread's account is left alone. */
    public static void own(Object o, Acct t, int account, int site) {
        if (t == null) t = Ledger.current(); // before Budget: see object()
        long[][] pg = t.pages;
        long[] p;
        int i = (site & PAGE_MASK) * SLOT;
        if (!(Budget.MAY_THROW && Budget.anyThrowing)
                && (p = pg[site >>> PAGE_BITS & pg.length - 1])[i] == owner(site, account)) {
            long n = ++p[i + 1];
            if (Context.ON) Context.object(t, account, site);
            if (Live.MODE == Live.SAMPLE && n % Live.RATE == 0) sampled(o, account, site, n, 0, 0);
            return;
        }
        ownSlow(Live.MODE == Live.OFF ? null : o, o.getClass(), t, account, site, -1, 0);
    }

    /** As {@link #own(Object, Acct, int, int)} when the reference is not at hand: the class gives the site its size. */
    public static void own(Class<?> c, Acct t, int account, int site) {
        ownSlow(null, c, t != null ? t : Ledger.current(), account, site, -1, 0);
    }

    /** As {@link #own(Object, Acct, int, int)} when neither the reference nor its class is at hand (class files before version 49). */
    public static void own(Acct t, int account, int site) {
        try {
            (t != null ? t : Ledger.current()).add(account, site, 1, 0, 0);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    public static void own(boolean[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 1); }
    public static void own(byte[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 1); }
    public static void own(char[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 2); }
    public static void own(short[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 2); }
    public static void own(int[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 4); }
    public static void own(float[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 4); }
    public static void own(long[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 8); }
    public static void own(double[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, 8); }
    public static void own(Object[] a, Acct t, int account, int site) { ownArray(a, t, account, site, a.length, Sizes.REF); }

    private static void ownArray(Object a, Acct t, int account, int site, int length, int elementSize) {
        if (t == null) t = Ledger.current();
        long[][] pg = t.pages;
        long[] p;
        int i = (site & PAGE_MASK) * SLOT;
        if (!(Budget.MAY_THROW && Budget.anyThrowing)
                && (p = pg[site >>> PAGE_BITS & pg.length - 1])[i] == owner(site, account)) {
            long bytes = Sizes.array(length, elementSize);
            long n = ++p[i + 1];
            p[i + 2] += length;
            p[i + 3] += bytes;
            if (Context.ON) Context.array(t, account, site, length, bytes);
            if (Live.MODE == Live.SAMPLE && n % Live.RATE == 0) sampled(a, account, site, n, length, bytes);
            return;
        }
        ownSlow(Live.MODE == Live.OFF ? null : a, null, t, account, site, length, elementSize);
    }

    /** The slow path, which sets the thread's account, with the caller's account put back, even when a budget throws. */
    private static void ownSlow(Object o, Class<?> c, Acct t, int account, int site, int length, int elementSize) {
        int caller = t.account;
        try {
            slow(o, c, t, account, site, length, elementSize);
        } finally {
            t.account = caller;
        }
    }

    // ---- account switches counted (--count-increments, Switches) ----

    /** A method of an accounted class (method is its ID) switched t's account on entry. */
    public static void switched(Acct t, int method) {
        Switches.note(t, method, Switches.SWITCHED);
    }

    /** A method (method is its ID) ran without the switch the rewriter left out: its callers run in its account. */
    public static void leftOut(int method) {
        try {
            Switches.note(Ledger.current(), method, Switches.LEFT_OUT);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    // ---- path counters (--counters paths, docs/instrumentation.md "Path counters") ----

    /**
     * One increment of path counter id, which stands for several object sites (the table says
     * which; the snapshot turns path counts back into their rows, PathCounts). It is charged to
     * account, or to the thread's account when account is -1 (a class in no account, which
     * keeps its caller's). t may be null (a '*' method that has not fetched the state yet); the
     * state is returned for the method to keep. c is the counting method's class: its loader
     * names the sites' classes for the size model, as no object is seen here.
     */
    public static Acct path(Acct t, int account, int id, Class<?> c) {
        Acct a = t != null ? t : Ledger.current();
        int acct = account >= 0 ? account : a.account;
        long[][] pg = a.pages;
        long[] p;
        int i = (id & PAGE_MASK) * SLOT;
        if (!(Budget.MAY_THROW && Budget.anyThrowing) && (p = pg[id >>> PAGE_BITS & pg.length - 1])[i] == owner(id, acct)) {
            if (++p[i + 1] == ADAPT_AFTER) adaptReached();
            if (account >= 0 && a.account != account) a.account = account;
            return a;
        }
        // An account over a budget that throws: before the increment, so that the progress
        // local, not yet moved past this counter, corrects exactly what ran.
        if (Budget.anyThrowing) Budget.enforce(acct);
        return pathSlow(a, account, acct, id, c);
    }

    /**
     * The agent's (--adapt): names the thread adaptReached wakes, before any class can count.
     * LockSupport is touched here, on the agent's thread, not first in the middle of a count.
     */
    public static void adaptWaiter(Thread t) {
        java.util.concurrent.locks.LockSupport.unpark(null);
        adaptWaiter = t;
    }

    private static void adaptReached() {
        try {
            Thread w = adaptWaiter;
            if (w != null) java.util.concurrent.locks.LockSupport.unpark(w);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    /**
     * Whether a path counter's slow path ran. Kept here, not in PathCounts: while the program
     * runs, counting by paths must load no class that counting by sites does not. Each class the
     * JVM defines on a thread moves that thread's identity hash codes on, and a program whose
     * work depends on them (one iterating a set of objects hashed by identity) would then do
     * different work under the two modes. PathCounts is loaded at the first snapshot in both.
     */
    private static volatile boolean pathsSeen;

    private static Acct pathSlow(Acct a, int account, int acct, int id, Class<?> c) {
        try {
            if (!pathsSeen) seePaths(c);
            if (account >= 0) a.account = account;
            if (SiteClasses.get(id) == null) SiteClasses.put(id, c);
            a.add(acct, id, 1, 0, 0);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
        return a;
    }

    /** The first path counter's slow path: when liveness or a budget is on, say that they miss its objects. */
    private static void seePaths(Class<?> c) {
        pathsSeen = true;
        if (pathsBlind()) PathCounts.tell(c);
    }

    /** Whether liveness or a budget is on, which path-counted objects escape. */
    static boolean pathsBlind() {
        return Live.MODE != Live.OFF || Budget.configured();
    }

    /**
     * The correction of a handler, or of the method's catch-all: progress is the deficit class
     * of the block the exception left (0: nothing owed), whose correction counter is
     * first + progress - 1. It never throws (no budget check): it runs in the program's handlers.
     */
    public static Acct fix(Acct t, int account, int first, int progress, Class<?> c) {
        if (progress == 0) return t;
        Acct a = t != null ? t : Ledger.current();
        int acct = account >= 0 ? account : a.account;
        return pathSlow(a, account, acct, first + progress - 1, c);
    }

    // multiIn, not multi: (Object, Acct, 5 ints) would clash with multi's three-dimension form.
    public static Acct multiIn(Object a, Acct t, int d1, int d2, int shape, int account, int site) {
        return multiInto(a, t, new int[] {d1, d2}, shape, account, site);
    }

    public static Acct multiIn(Object a, Acct t, int d1, int d2, int d3, int shape, int account, int site) {
        return multiInto(a, t, new int[] {d1, d2, d3}, shape, account, site);
    }

    public static Acct multiIn(Object a, Acct t, int[] dims, int shape, int account, int site) {
        return multiInto(a, t, dims, shape, account, site);
    }

    private static Acct multiInto(Object a, Acct t, int[] dims, int shape, int account, int site) {
        try {
            if (t == null) t = Ledger.here();
            t.account = account;
            multiCount(a, t, dims, shape, site);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
        return t;
    }

    // ---- multianewarray ----

    /**
     * A multianewarray of allocDim = dims.length dimensions that succeeded. shape packs the
     * array type: (arrayDim) | (base descriptor char << 8), base 'L' for references.
     * Counts follow section 5 / Figure 4 of "Portable profiling of memory allocation in Java"
     * (long arithmetic): part 0 of the site holds the arrays of references, part 1 the arrays
     * of the primitive base type when all dimensions of a primitive array are allocated.
     */
    public static void multi(Object a, Acct t, int d1, int d2, int shape, int site) {
        try {
            multiCount(a, t, new int[] {d1, d2}, shape, site);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    public static void multi(Object a, Acct t, int d1, int d2, int d3, int shape, int site) {
        try {
            multiCount(a, t, new int[] {d1, d2, d3}, shape, site);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    public static void multi(Object a, Acct t, int[] dims, int shape, int site) {
        try {
            multiCount(a, t, dims, shape, site);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    /**
     * Liveness of a multianewarray follows its outermost array: the levels below live and die
     * with it unless the program keeps one of them elsewhere (docs/runtime.md).
     */
    static void multiCount(Object a, Acct t, int[] dims, int shape, int site) {
        long[] r = multiArrays(dims, shape);
        int account = t.account;
        long k0 = Counts.key(account, site, 0);
        long n = t.add(account, site, r[0], r[1], r[2]);
        boolean live = Live.MODE != Live.OFF && a != null;
        if (live) Live.track(a, k0, n, r[0], r[1], r[2]);
        if (r[3] >= 0) {
            long k1 = Counts.key(account, site, 1);
            long n1 = t.counts.add(k1, r[3], r[4], r[5]);
            if (Context.ON) Context.count(t, k1, r[3], r[4], r[5]);
            if (live) Live.track(a, k1, n1, r[3], r[4], r[5]);
        }
    }

    /**
     * Returns {refArrays, refElements, refBytes, leafArrays, leafElements, leafBytes}; the leaf
     * triple is -1 when the allocation has no primitive leaf level. Exposed for tests of Figure 3.
     */
    static long[] multiArrays(int[] dims, int shape) {
        int allocDim = dims.length;
        int arrayDim = shape & 0xFF;
        char base = (char) ((shape >>> 8) & 0xFF);
        boolean primitiveLeaf = allocDim == arrayDim && base != 'L' && base != '[';
        long prod = 1, arr = 0, el = 0, bytes = 0;
        long[] out = {0, 0, 0, -1, -1, -1};
        for (int i = 1; i <= allocDim; i++) {
            int elemSize = Sizes.REF;
            if (i == allocDim && primitiveLeaf) {
                out[0] = arr;
                out[1] = el;
                out[2] = bytes;
                arr = 0;
                el = 0;
                bytes = 0;
                elemSize = Sizes.element(base);
            }
            arr += prod; // prod arrays are allocated at this level, each dims[i-1] long
            bytes += prod * Sizes.array(dims[i - 1], elemSize);
            prod *= dims[i - 1];
            el += prod;
        }
        if (primitiveLeaf) {
            out[3] = arr;
            out[4] = el;
            out[5] = bytes;
        } else {
            out[0] = arr;
            out[1] = el;
            out[2] = bytes;
        }
        return out;
    }

    private static char primitiveChar(Class<?> c) {
        if (c == int.class) return 'I';
        if (c == long.class) return 'J';
        if (c == double.class) return 'D';
        if (c == float.class) return 'F';
        if (c == char.class) return 'C';
        if (c == short.class) return 'S';
        if (c == byte.class) return 'B';
        return 'Z';
    }
}
