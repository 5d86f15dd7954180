package heapledger.rt;

import java.lang.ref.WeakReference;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;

/**
 * Liveness: which counted objects are still alive, how old they are, and refunds to the
 * account, type and site they were charged to when the collector reclaims them.
 *
 * <p>Weak references, not phantom ones: a weak reference is cleared as soon as its object is
 * only weakly reachable, before finalization or any phantom processing, so a reclaimed object is
 * refunded at the first collection that finds it unreachable and a snapshot taken after a full
 * GC sees exactly the strongly or softly reachable objects as live — the same population a heap
 * dump's "live" objects show. Phantom references would count objects resurrected by finalizers
 * as live until their second collection; we never need the referent, so weak is enough.
 *
 * <p>Settings: heapledger.liveness / HEAPLEDGER_LIVENESS = off | all | sample:N (default off, or
 * what the rewrite chose); heapledger.liveness.max / HEAPLEDGER_LIVENESS_MAX = the most objects
 * tracked that survived a collection (default: as many as fit in an eighth of the maximum heap
 * at 48 bytes each, 100,000 at least; 48 bytes each for objects, 72 for arrays). Past the bound
 * new objects are counted as allocated but not tracked: each snapshot reports how many, per row, and the live
 * figures of those rows are then lower bounds.
 */
final class Live {
    static final int OFF = 0, ALL = 1, SAMPLE = 2;
    static final int MODE;
    static final int RATE; // every RATE-th allocation per (account, site) is tracked
    static final long MAX;

    static {
        String m = Snapshots.setting("heapledger.liveness", "HEAPLEDGER_LIVENESS", Config.get("liveness", "off"));
        int mode = OFF, rate = 1;
        if (m.equals("all")) {
            mode = ALL;
        } else if (m.startsWith("sample:")) {
            try {
                rate = Integer.parseInt(m.substring(7));
                mode = rate <= 1 ? ALL : SAMPLE;
                if (rate < 1) rate = 1;
            } catch (NumberFormatException e) {
                Snapshots.warn("liveness '" + m + "': N of sample:N must be a whole number; liveness is off");
            }
        } else if (!m.equals("off")) {
            Snapshots.warn("liveness '" + m + "' is not off, all or sample:N; liveness is off");
        }
        MODE = mode;
        RATE = mode == ALL ? 1 : rate;
        // As many surviving tracked objects as fit in an eighth of the largest heap the JVM may
        // have (settled): a fixed 4 million left most of a large in-memory database untracked,
        // and would fill a small heap.
        long max = Math.max(100000, Runtime.getRuntime().maxMemory() / 8 / 48);
        String mx = Snapshots.setting("heapledger.liveness.max", "HEAPLEDGER_LIVENESS_MAX", "");
        if (!mx.isEmpty()) {
            try {
                max = Long.parseLong(mx);
            } catch (NumberFormatException e) {
                Snapshots.warn("liveness.max '" + mx + "' is not a number; using " + max);
            }
        }
        MAX = max;
        if (MODE != OFF) start();
    }

    static String describe() {
        return MODE == OFF ? "off" : MODE == ALL ? "all" : "sample:" + RATE;
    }

    /**
     * A tracked object: what it was charged to, and when. Every young collection copies the
     * references made since the last one (they stay reachable until the sweeper has refunded
     * them), so their size is most of what sampling costs the collector: on sunflow, 220,000 of
     * them per collection. A plain object needs only its key and epoch (one object,
     * no elements, its bytes come from the site's class at snapshot time); arrays and
     * multianewarrays carry their figures in {@link TrackedArray}. With compressed references
     * this is 48 bytes, against 80 when every reference carried all four figures and its stripe.
     */
    static class Tracked extends WeakReference<Object> {
        final long key;
        /** GC epoch at allocation, shifted left by STRIPE_BITS, or'ed with the stripe. */
        final int bornStripe;
        Tracked prev, next;

        Tracked(Object o, long key, int bornStripe) {
            super(o); // no queue: the sweeper finds what the collector cleared (sweep)
            this.key = key;
            this.bornStripe = bornStripe;
        }

        long count() { return 1; }
        long elements() { return 0; }
        long bytes() { return 0; }
        final int born() { return bornStripe >>> STRIPE_BITS; }
        final int stripe() { return bornStripe & (STRIPES - 1); }
    }

    static final class TrackedArray extends Tracked {
        final long count, elements, bytes;

        TrackedArray(Object o, long key, int bornStripe, long count, long elements, long bytes) {
            super(o, key, bornStripe);
            this.count = count;
            this.elements = elements;
            this.bytes = bytes;
        }

        @Override long count() { return count; }
        @Override long elements() { return elements; }
        @Override long bytes() { return bytes; }
    }

    private static final int STRIPE_BITS = 6, STRIPES = 1 << STRIPE_BITS;
    /** The tracked references must stay strongly reachable until dequeued; they sit in striped
     *  intrusive lists so threads rarely contend, and removal is O(1). */
    private static final Tracked[] HEADS = new Tracked[STRIPES];
    private static final Object[] LOCKS = new Object[STRIPES];
    /**
     * Per stripe, a cache line apart ({@link #TRACKED_AT} and the offsets after it), each changed
     * under its stripe's lock, so threads on different stripes never share a counter's cache
     * line: the objects tracked now; of them, those tracked since the stripe's last turn (NEW)
     * and those tracked in the turn before it (PENDING); and, as of the last sweep, the settled
     * ones (the rest: tracked before a collection that left them). Not a LongAdder: under
     * contention it allocates cells in java.util.concurrent code, which the agent's --jdk
     * rewrites, so counting them re-entered the liveness path from inside it until the stack
     * overflowed (a program thread then lost its accounting state: TestAgentJDKLiveness under
     * load). Nothing on the counting path may call JDK code that allocates.
     */
    private static final long[] STATE = new long[STRIPES * 8];
    private static final int TRACKED_AT = 0, NEW_AT = 1, PENDING_AT = 2, SETTLED_AT = 3;
    /**
     * The collections counted (gcCount) when each stripe last turned, in STATE at TURNED_AT. A
     * sweep that counts more knows that a collection has passed over every object tracked
     * before the turn (turn). The count is read afresh, not taken from {@link #collections},
     * which the sweeper and the GC notifications keep and which trails the collections under
     * load: objects made between a collection and its update passed for survivors of it, 16
     * million of them in a second of 32 threads' churn, and filled the bound (issue 32). Not a
     * weak reference to an object of the stripe's own, cleared by the first collection after
     * the turn: a young collection leaves the referent of a reference the survivors' overflow
     * promoted, so turns stopped under heavy allocation, and every sweep then walked all the
     * objects tracked since.
     */
    private static final int TURNED_AT = 4;
    /** The collectors' MXBeans, read once at start (gcCount); null when there are none to read. */
    private static java.lang.management.GarbageCollectorMXBean[] gcBeans;

    /** Whether the bound was said to be reached (under UNTRACKED's lock). */
    private static boolean boundTold;
    /** Refunds (sweep, and the walk of a snapshot); guarded by itself. */
    static final Counts RECLAIMED = new Counts();
    /**
     * Held by the sweeper over each stripe's sweep, from taking cleared objects off the list to
     * adding them to RECLAIMED, and by a snapshot over reading RECLAIMED and walking: otherwise
     * an object the sweeper took off before the walk and refunded after the snapshot read
     * RECLAIMED is in neither figure. Only the sweeper and snapshots take it, never the
     * program's threads; order: SWEEP, then a stripe's lock, then RECLAIMED.
     */
    static final Object SWEEP = new Object();
    /** Objects that should have been tracked but were not (the bound); guarded by itself. */
    static final Counts UNTRACKED = new Counts();
    /** GC epoch: collections seen so far, from the collectors' MXBeans. */
    static volatile int epoch;
    /**
     * Collections seen so far: what sweeps go by. Not the epoch, which a snapshot's full GC
     * moves on before it collects (fullGC): a sweep then would clear nothing and count every
     * object as one that survived (settled), filling the bound.
     */
    static volatile int collections;

    static {
        for (int i = 0; i < STRIPES; i++) LOCKS[i] = new Object();
    }

    /**
     * Called right after an allocation was counted. seen is the key's count so far (sampling
     * tracks every RATE-th); count, elements and bytes are what this allocation added.
     */
    static void track(Object o, long key, long seen, long count, long elements, long bytes) {
        if (MODE == SAMPLE && seen % RATE != 0) return;
        // The runtime's own work in rewritten JDK code counts into a private state; its objects
        // are not the program's (SelfCounted).
        if (SelfCounted.on && Ledger.here().quiet) return;
        int stripe = (int) (Thread.currentThread().getId() & (STRIPES - 1));
        // After each collection the first thread to track into a stripe refunds what the
        // collector cleared there, before it adds to it: the work falls on the threads that made
        // the garbage, in proportion, and never waits for the sweeper, which many allocating
        // threads on few cores starve (issue 32: millions of cleared references waited, filled
        // the tracking table, and a real leak went untracked behind them).
        if (SWEPT[stripe * 16] != collections) sweepStripe(stripe, false);
        if (settled() >= MAX) {
            synchronized (UNTRACKED) {
                UNTRACKED.add(key, count, elements, bytes);
                if (!boundTold) {
                    boundTold = true;
                    Snapshots.warn("liveness: " + settled() + " tracked objects have survived a collection, the bound of " + MAX
                            + " (" + tracked() + " tracked in all); objects made from now on are counted but not tracked until"
                            + " some die: their rows say how many (UNTRACKED). heapledger.liveness.max raises the bound");
                }
            }
            return;
        }
        // The epoch keeps its low 26 bits: ages are differences of a few collections, and a run
        // would need 67 million collections to wrap.
        int bs = (epoch << STRIPE_BITS) | stripe;
        Tracked t = count == 1 && elements == 0 && bytes == 0 ? new Tracked(o, key, bs) : new TrackedArray(o, key, bs, count, elements, bytes);
        synchronized (LOCKS[stripe]) {
            Tracked h = HEADS[stripe];
            t.next = h;
            if (h != null) h.prev = t;
            HEADS[stripe] = t;
            STATE[stripe * 8 + TRACKED_AT]++;
            STATE[stripe * 8 + NEW_AT]++;
        }
    }

    /**
     * Tracked objects that survived a collection, as of each stripe's last sweep: those tracked
     * before the turn before its last one (turn). The bound applies to them, not to the objects
     * made since: those are as many as the young generation holds, and the next collection
     * frees the references of the ones that die (a bound on all of them left everything made
     * past it untracked between two collections, a real leak among it, issue 32).
     */
    static long settled() {
        long n = 0;
        for (int i = SETTLED_AT; i < STATE.length; i += 8) n += STATE[i];
        return n;
    }

    /** Objects tracked now; read without the locks, so it may trail by the objects in flight. */
    static long tracked() {
        long n = 0;
        for (int i = TRACKED_AT; i < STATE.length; i += 8) n += STATE[i];
        return n;
    }

    /**
     * Ages below which an object may still be in the young generation: collectors promote what
     * survives 15 young collections at the most (HotSpot's MaxTenuringThreshold), so a young
     * collection clears no object older than this, and a young sweep looks no further.
     */
    static final int YOUNG_AGES = 16;
    /** How often the sweeper looks at the collection counts when no notification comes. */
    private static final long POLL_MS = 50;
    /** How often it sweeps every stripe whole (old objects a full or mixed collection cleared). */
    private static final long FULL_SWEEP_MS = 1000;
    private static final Object WAKE = new Object();
    /** Per stripe (a cache line apart), the collections at its last sweep: sweeping again before
     *  the next collection would find nothing the collector cleared. */
    private static final int[] SWEPT = new int[STRIPES * 16];

    /**
     * Starts the sweeper: after each collection it refunds what the collector cleared, without a
     * ReferenceQueue. A queue made the JVM's reference handler enqueue every cleared reference
     * one at a time, under the queue's lock, and a drain thread dequeue it again under the same
     * lock; under many allocating threads on few cores both fell far behind (hundreds of
     * thousands of references waiting), and the objects waiting to be refunded filled the
     * tracking table. The stripes' lists keep the newest first, so a sweep after a young
     * collection walks only the objects young enough to have been in it.
     */
    private static void start() {
        if (!SelfCounted.on) {
            listenForCollections();
            try {
                gcBeans = java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
                        .toArray(new java.lang.management.GarbageCollectorMXBean[0]);
            } catch (Throwable e) {
                Ledger.drop(e);
            }
        }
        Thread d = new Thread("heapledger-liveness") {
            @Override
            public void run() {
                int swept = collections;
                long full = System.currentTimeMillis();
                while (true) {
                    try {
                        synchronized (WAKE) {
                            WAKE.wait(POLL_MS);
                        }
                        updateEpoch();
                        long now = System.currentTimeMillis();
                        if (now - full >= FULL_SWEEP_MS) {
                            sweep(true);
                            full = now;
                        } else if (collections != swept) {
                            sweep(false);
                        }
                        swept = collections;
                    } catch (InterruptedException e) {
                        return;
                    } catch (Throwable e) {
                        Ledger.drop(e);
                    }
                }
            }
        };
        d.setDaemon(true);
        d.start();
    }

    /** A collection ended: the sweeper goes now rather than at its next poll. */
    private static void collected() {
        updateEpoch();
        synchronized (WAKE) {
            WAKE.notifyAll();
        }
    }

    /**
     * Refunds what the collector cleared, stripe by stripe: of the objects young enough to have
     * been in a young collection, or of all of them when full. Returns how many it refunded.
     */
    static long sweep(boolean full) {
        long n = 0;
        for (int i = 0; i < STRIPES; i++) n += sweepStripe(i, full);
        return n;
    }

    /**
     * sweep for one stripe; the refunds go into RECLAIMED after the stripe's lock is let go.
     * Its list holds, newest first, the objects tracked since its last turn (NEW), those of
     * the turn before (PENDING), then the settled ones, so a node's place tells its group.
     */
    static long sweepStripe(int stripe, boolean full) {
        synchronized (SWEEP) {
            return sweepStripeLocked(stripe, full);
        }
    }

    private static long sweepStripeLocked(int stripe, boolean full) {
        int now = epoch, oldest = (now & (-1 >>> STRIPE_BITS)) - YOUNG_AGES;
        Tracked gone = null;
        long n = 0;
        synchronized (LOCKS[stripe]) {
            SWEPT[stripe * 16] = collections;
            long counted = gcCount(); // read before the walk: see turn
            boolean collected = counted > STATE[stripe * 8 + TURNED_AT];
            long fresh = STATE[stripe * 8 + NEW_AT], young = fresh + STATE[stripe * 8 + PENDING_AT];
            long goneNew = 0, gonePending = 0, at = 0;
            for (Tracked t = HEADS[stripe], next; t != null; t = next, at++) {
                next = t.next;
                // newest first: past the groups, the rest are older
                if (!full && at >= young && t.born() - oldest < 0) break;
                if (t.get() != null) continue;
                if (at < fresh) goneNew++;
                else if (at < young) gonePending++;
                unlink(t, stripe);
                t.next = gone; // off the list now: its link can chain the refunds
                gone = t;
                n++;
            }
            turn(stripe, goneNew, gonePending, collected);
            if (collected) STATE[stripe * 8 + TURNED_AT] = counted;
        }
        if (gone != null) {
            synchronized (RECLAIMED) {
                for (Tracked t = gone; t != null; t = t.next) RECLAIMED.add(t.key, t.count(), t.elements(), t.bytes());
            }
        }
        return n;
    }

    /**
     * Settles a stripe's groups after a walk took off goneNew of its NEW objects and
     * gonePending of its PENDING ones; under the stripe's lock. When a collection came since
     * its last turn (collected), the stripe turns: a collection has passed over every object
     * tracked before that turn, so the PENDING ones still here settled, and the NEW ones,
     * which may have been made before or after that collection, become PENDING until the next.
     */
    private static void turn(int stripe, long goneNew, long gonePending, boolean collected) {
        int s = stripe * 8;
        long fresh = STATE[s + NEW_AT] - goneNew, pending = STATE[s + PENDING_AT] - gonePending;
        if (collected) {
            pending = fresh;
            fresh = 0;
        }
        STATE[s + NEW_AT] = fresh;
        STATE[s + PENDING_AT] = pending;
        STATE[s + SETTLED_AT] = STATE[s + TRACKED_AT] - fresh - pending;
    }

    /** Takes t off its stripe's list, under the stripe's lock; false when it was off already. */
    private static boolean unlink(Tracked t, int stripe) {
        if (t.prev == null && t.next == null && HEADS[stripe] != t) return false;
        if (t.prev != null) t.prev.next = t.next;
        else HEADS[stripe] = t.next;
        if (t.next != null) t.next.prev = t.prev;
        t.prev = t.next = null;
        STATE[stripe * 8 + TRACKED_AT]--;
        return true;
    }

    private static java.util.List<java.lang.management.GarbageCollectorMXBean> gcs;

    /**
     * The collections the collectors have counted so far, read now: each pause's collection is
     * counted before the program's threads go on. Falls back on {@link #collections} when the
     * MXBeans could not be had at start. Calls only native code and allocates nothing.
     */
    static long gcCount() {
        java.lang.management.GarbageCollectorMXBean[] beans = gcBeans;
        if (beans == null) return collections;
        long n = 0;
        for (java.lang.management.GarbageCollectorMXBean b : beans) {
            long c = b.getCollectionCount();
            if (c > 0) n += c;
        }
        return n;
    }

    /** Keeps the epoch current at every collection, so ages are exact without polling. */
    private static void listenForCollections() {
        try {
            javax.management.NotificationListener l = new javax.management.NotificationListener() {
                @Override
                public void handleNotification(javax.management.Notification n, Object handback) {
                    collected();
                }
            };
            for (java.lang.management.GarbageCollectorMXBean b : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
                if (b instanceof javax.management.NotificationEmitter) {
                    ((javax.management.NotificationEmitter) b).addNotificationListener(l, null, null);
                }
            }
        } catch (Throwable e) {
            Snapshots.warn("no GC notifications (" + e + "); object ages are read from collection counts once a second");
        }
    }

    /** Reads the collectors' counts; called by the sweeper and before snapshots. */
    static void updateEpoch() {
        try {
            if (gcs == null) gcs = java.lang.management.ManagementFactory.getGarbageCollectorMXBeans();
            long n = 0;
            for (java.lang.management.GarbageCollectorMXBean b : gcs) {
                long c = b.getCollectionCount();
                if (c > 0) n += c;
            }
            // Only forward: a snapshot's full GC moves the epoch on before the collection
            // (fullGC), and the collectors' counts catch up after it.
            if (n > epoch) epoch = (int) n;
            if (n != collections) collections = (int) n;
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    /**
     * Runs a full collection for a snapshot and returns the epoch it starts, or -1 when no
     * collection ran (-XX:+DisableExplicitGC). The epoch moves on before the collection, so the
     * objects tracked from then on are told from those the collection judged: a walk after it
     * (liveByKey) counts as live exactly the objects tracked before it that it left reachable,
     * however fast the program goes on allocating, and refunds itself what it cleared, however
     * far behind the sweeper is.
     */
    static int fullGC() {
        updateEpoch();
        int mark = epoch + 1;
        epoch = mark;
        WeakReference<Object> sentinel = new WeakReference<Object>(new Object());
        System.gc();
        updateEpoch();
        if (sentinel.get() != null) {
            Snapshots.warn("full GC before the snapshot did not run (-XX:+DisableExplicitGC?)");
            return -1;
        }
        return mark;
    }

    /** What a walk of the tracked objects found besides the live ones (liveByKey). */
    static final class Walk {
        /** Cleared by the collector, not refunded yet when the walk met them: it refunded them. */
        long refunded;
        /** Tracked since the walk's mark: the collection the live figures are of has not judged them. */
        long young;
        /** What the walk refunded, by key: the snapshot's reclaimed figures add it (LiveView.take). */
        final Counts refunds = new Counts();
    }

    /**
     * Walks the tracked objects: per key {distinct birth epochs (surviving generations),
     * objects, bytes, objects tracked before previous, the mark of the snapshot before (0 for
     * none)} (unscaled) of the live ones, and live objects by age into ageHistogram.
     * Live are those tracked before mark, the epoch of the collection the figures are of (a
     * snapshot's full GC, or the last collection), whose referent it left: what it judged
     * reachable. Objects tracked since are young, in no figure; what the collector cleared and
     * nobody refunded yet is refunded here, so no live figure waits on the sweeper.
     */
    static Map<Long, long[]> liveByKey(long[] ageHistogram, int mark, int previous, Walk w) {
        Map<Long, HashSet<Integer>> born = new HashMap<Long, HashSet<Integer>>();
        Map<Long, long[]> out = new HashMap<Long, long[]>();
        int now = epoch & (-1 >>> STRIPE_BITS), before = mark & (-1 >>> STRIPE_BITS), prior = previous & (-1 >>> STRIPE_BITS);
        java.util.ArrayList<Tracked> cleared = new java.util.ArrayList<Tracked>();
        for (int i = 0; i < STRIPES; i++) {
            synchronized (LOCKS[i]) {
                long fresh = STATE[i * 8 + NEW_AT], young = fresh + STATE[i * 8 + PENDING_AT];
                long goneNew = 0, gonePending = 0, at = -1;
                for (Tracked t = HEADS[i], next; t != null; t = next) {
                    next = t.next;
                    at++;
                    if (t.get() == null) {
                        if (at < fresh) goneNew++;
                        else if (at < young) gonePending++;
                        unlink(t, i);
                        cleared.add(t);
                        continue;
                    }
                    if (t.born() - before >= 0) {
                        w.young += t.count();
                        continue;
                    }
                    HashSet<Integer> s = born.get(t.key);
                    if (s == null) born.put(t.key, s = new HashSet<Integer>());
                    s.add(t.born());
                    long[] v = out.get(t.key);
                    if (v == null) out.put(t.key, v = new long[4]);
                    v[1] += t.count();
                    v[2] += t.bytes();
                    // Tracked before the previous snapshot's mark: it was there then and is
                    // still, which garbage in flight at this snapshot's collection is not.
                    if (previous > 0 && t.born() - prior < 0) v[3] += t.count();
                    int age = now - t.born();
                    int bucket = age <= 0 ? 0 : Math.min(ageHistogram.length - 1, 32 - Integer.numberOfLeadingZeros(age));
                    ageHistogram[bucket] += t.count();
                }
                turn(i, goneNew, gonePending, false);
            }
        }
        synchronized (RECLAIMED) {
            for (Tracked t : cleared) {
                RECLAIMED.add(t.key, t.count(), t.elements(), t.bytes());
                w.refunds.add(t.key, t.count(), t.elements(), t.bytes());
                w.refunded += t.count();
            }
        }
        for (Map.Entry<Long, HashSet<Integer>> e : born.entrySet()) out.get(e.getKey())[0] = e.getValue().size();
        return out;
    }
}
