package heapledger.rt;

/**
 * A node of a thread's calling-context tree (the count pass's --context cct; the method call
 * tree of "Portable profiling of memory allocation in Java", section 2): one method in one
 * calling context, with the account its own code charges, its invocation count and what was
 * allocated while it was the thread's current node.
 *
 * <p>Rewritten methods call {@link #enter} at their very start (before super() in a
 * constructor: the superclass constructor is then the constructor's child, as in the paper) and
 * keep the node they replaced in a local, which they put back in {@link Acct#node} before every
 * return and in a handler over the body that rethrows. The counting methods of {@link Acct} add
 * every allocation they count to the current node too ({@link #count}), so the tree's
 * allocations equal the flat counts row for row.
 *
 * <p>Only the owning thread writes a node. A snapshot reads the trees of running threads
 * without stopping them ({@link ContextTree}): children and allocation rows live in arrays that
 * are replaced whole when they grow, and a node's identity (parent, method, account, depth) is
 * final, so a reader sees a node complete or not at all.
 *
 * <p>Bounds (docs/runtime.md, "Calling contexts"), per thread: a call deeper than
 * {@link #MAX_DEPTH} stays in the deepest node, and a new context past {@link #MAX_NODES} nodes
 * goes to its parent's overflow node (method -1); both are counted in the thread's state and
 * written in every snapshot. With {@link #FOLD}, a method already on the path (same method and
 * account) is entered as that ancestor: recursion folds into one node.
 */
public final class Context {
    final Context parent;
    /** The method's ID (a site of kind method in the table); 0 for the root, -1 for an overflow node. */
    final int method;
    /** The account the method's own code charges: its class's, or, unaccounted, the caller's. */
    final int account;
    final int depth;
    /** Invocations entered as this node. */
    long calls;
    /**
     * Children by method, open addressing: an entry whose parent is not this node is an
     * ancestor a folded recursion maps to.
     */
    Context[] kids = NO_KIDS;
    private int nkids;
    /** Allocation rows: key+1, count, elements, bytes (as Counts); null until the first. */
    long[] rows;
    private int nrows;
    /** Where new contexts below this node go once the thread's node limit is reached. */
    Context overflow;

    private static final Context[] NO_KIDS = new Context[1];

    /** --context cct in the table's config, or heapledger.context: counts go into nodes and snapshots carry the tree. */
    static final boolean ON;
    static final int MAX_DEPTH, MAX_NODES;
    static final boolean FOLD;
    static final String DESCRIPTION;

    static {
        String spec = Snapshots.setting("heapledger.context", "HEAPLEDGER_CONTEXT", Config.get("context", "none"));
        int depth = 512, nodes = 100000;
        boolean fold = false, on = spec.equals("cct") || spec.startsWith("cct:");
        if (on && spec.length() > 4) {
            for (String opt : spec.substring(4).split(",")) {
                try {
                    if (opt.startsWith("depth=")) depth = Math.max(1, Integer.parseInt(opt.substring(6)));
                    else if (opt.startsWith("nodes=")) nodes = Math.max(1, Integer.parseInt(opt.substring(6)));
                    else if (opt.equals("fold")) fold = true;
                    else Snapshots.warn("unknown context option '" + opt + "' ignored");
                } catch (NumberFormatException e) {
                    Snapshots.warn("context option '" + opt + "' is not a number; ignored");
                }
            }
        } else if (!on && !spec.equals("none")) {
            Snapshots.warn("unknown context mode '" + spec + "', using none");
        }
        ON = on;
        MAX_DEPTH = depth;
        MAX_NODES = nodes;
        FOLD = fold;
        DESCRIPTION = on ? "cct depth=" + depth + " nodes=" + nodes + (fold ? " fold" : "") : "none";
    }

    /** Does nothing; calling it initialises this class (Snapshots.start, before any counting). */
    static void init() {}

    Context(Context parent, int method, int account) {
        this.parent = parent;
        this.method = method;
        this.account = account;
        this.depth = parent == null ? 0 : parent.depth + 1;
    }

    static Context root() {
        return new Context(null, 0, 0);
    }

    private static int slot(int method, int account, int mask) {
        return (method * 0x9E3779B9 + account) >>> 7 & mask;
    }

    /**
     * Enters method in the thread's current context, its own code charging account: the child
     * becomes the current node, and is returned. The fast path (the child is in its first place)
     * is small enough to inline in every rewritten method.
     */
    public static Context enter(Acct t, int method, int account) {
        Context p = t.node;
        Context[] k = p.kids;
        Context c = k[slot(method, account, k.length - 1)];
        if (c != null && c.method == method && c.account == account) {
            c.calls++;
            t.node = c;
            return c;
        }
        return enterSlow(t, p, method, account);
    }

    /** As {@link #enter(Acct, int, int)} for a method of an unaccounted class: its code charges the caller's account. */
    public static Context enter(Acct t, int method) {
        return enter(t, method, t.account);
    }

    private static Context enterSlow(Acct t, Context p, int method, int account) {
        Context c;
        try {
            c = p.find(method, account);
            if (c != null) c.calls++;
            else c = p.child(t, method, account);
        } catch (Throwable e) {
            Ledger.drop(e);
            c = p;
        }
        t.node = c;
        return c;
    }

    /** The child (or folded ancestor) entered for method and account, null when there is none yet. */
    Context find(int method, int account) {
        Context[] k = kids;
        int mask = k.length - 1;
        for (int i = slot(method, account, mask), n = 0; n <= mask; i = (i + 1) & mask, n++) {
            Context c = k[i];
            if (c == null) return null;
            if (c.method == method && c.account == account) return c;
        }
        return null;
    }

    /**
     * A new context below this one, its call counted, within the bounds: the bounds' cuts are
     * counted in t (a call past the depth limit is in no node's calls).
     */
    private Context child(Acct t, int method, int account) {
        if (this.method == -1) {
            t.nodeCut++; // below an overflow node everything stays in it
            calls++;
            return this;
        }
        if (depth >= MAX_DEPTH) {
            t.depthCut++;
            return this;
        }
        if (FOLD) {
            for (Context a = this; a != null; a = a.parent) {
                if (a.method == method && a.account == account) {
                    put(a);
                    a.calls++;
                    return a;
                }
            }
        }
        if (t.nodes >= MAX_NODES) {
            t.nodeCut++;
            if (overflow == null) overflow = new Context(this, -1, account);
            overflow.calls++;
            return overflow;
        }
        Context c = new Context(this, method, account);
        c.calls = 1;
        t.nodes++;
        put(c);
        return c;
    }

    /** Adds c to the children table, doubling it past half full; the new table is published complete. */
    void put(Context c) {
        Context[] k = kids;
        if ((nkids + 1) * 2 > k.length) {
            Context[] bigger = new Context[Math.max(4, k.length * 2)];
            for (Context x : k) {
                if (x != null) insert(bigger, x);
            }
            insert(bigger, c);
            kids = bigger;
        } else {
            insert(k, c);
        }
        nkids++;
    }

    private static void insert(Context[] k, Context c) {
        int mask = k.length - 1;
        int i = slot(c.method, c.account, mask);
        while (k[i] != null) i = (i + 1) & mask;
        k[i] = c;
    }

    /**
     * Adds an allocation the flat counters just counted to the thread's current node. Only the
     * owning thread calls it; a failure is dropped, never thrown.
     */
    static void count(Acct t, long key, long count, long elements, long bytes) {
        try {
            t.node.add(key, count, elements, bytes);
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    /** One object counted on a fast path: as {@link #count}, its call kept small for the fast paths' bytecode. */
    static void object(Acct t, int account, int site) {
        count(t, Counts.key(account, site, 0), 1, 0, 0);
    }

    /** One array counted on a fast path, as {@link #object}. */
    static void array(Acct t, int account, int site, int length, long bytes) {
        count(t, Counts.key(account, site, 0), 1, length, bytes);
    }

    void add(long key, long count, long elements, long bytes) {
        long[] r = rows;
        if (r == null) r = rows = new long[Counts.STRIDE * 2];
        int mask = r.length / Counts.STRIDE - 1;
        long stored = key + 1;
        for (int i = (int) (key * 0x9E3779B97F4A7C15L >>> 40) & mask; ; i = (i + 1) & mask) {
            int s = i * Counts.STRIDE;
            if (r[s] == stored) {
                r[s + 1] += count;
                r[s + 2] += elements;
                r[s + 3] += bytes;
                return;
            }
            if (r[s] == 0) {
                if ((nrows + 1) * 4 > (mask + 1) * 3) {
                    growRows();
                    add(key, count, elements, bytes);
                    return;
                }
                r[s + 1] = count;
                r[s + 2] = elements;
                r[s + 3] = bytes;
                r[s] = stored; // the key last: a reader that sees it sees the first figures
                nrows++;
                return;
            }
        }
    }

    private void growRows() {
        long[] old = rows;
        long[] r = new long[old.length * 2];
        int mask = r.length / Counts.STRIDE - 1;
        for (int s = 0; s < old.length; s += Counts.STRIDE) {
            if (old[s] == 0) continue;
            int i = (int) ((old[s] - 1) * 0x9E3779B97F4A7C15L >>> 40) & mask;
            while (r[i * Counts.STRIDE] != 0) i = (i + 1) & mask;
            System.arraycopy(old, s, r, i * Counts.STRIDE, Counts.STRIDE);
        }
        rows = r;
    }
}
