package heapledger.rt;

import java.lang.ref.ReferenceQueue;
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
 * tracked at once (default 4,000,000; 48 bytes each for objects, 72 for arrays). Past the bound
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
        long max = 4000000;
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
     * references made since the last one (they stay reachable until the drain thread has
     * refunded them), so their size is most of what sampling costs the collector: on sunflow,
     * 220,000 of them per collection. A plain object needs only its key and epoch (one object,
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
            super(o, QUEUE);
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

    static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<Object>();
    private static final int STRIPE_BITS = 6, STRIPES = 1 << STRIPE_BITS;
    /** The tracked references must stay strongly reachable until dequeued; they sit in striped
     *  intrusive lists so threads rarely contend, and removal is O(1). */
    private static final Tracked[] HEADS = new Tracked[STRIPES];
    private static final Object[] LOCKS = new Object[STRIPES];
    /**
     * Objects tracked now, per stripe (a cache line apart), each changed under its stripe's
     * lock, so threads on different stripes never share a counter's cache line. Not a
     * LongAdder: under contention it allocates cells in java.util.concurrent code, which the agent's --jdk
     * rewrites, so counting them re-entered the liveness path from inside it until the stack
     * overflowed (a program thread then lost its accounting state: TestAgentJDKLiveness under
     * load). Nothing on the counting path may call JDK code that allocates.
     */
    private static final long[] TRACKED = new long[STRIPES * 8];
    /** Refunds, written only by the drain thread. */
    static final Counts RECLAIMED = new Counts();
    /** Objects that should have been tracked but were not (the bound); guarded by itself. */
    static final Counts UNTRACKED = new Counts();
    /** GC epoch: collections seen so far, from the collectors' MXBeans. */
    static volatile int epoch;

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
        if (tracked() >= MAX) {
            synchronized (UNTRACKED) {
                UNTRACKED.add(key, count, elements, bytes);
            }
            return;
        }
        int stripe = (int) (Thread.currentThread().getId() & (STRIPES - 1));
        // The epoch keeps its low 26 bits: ages are differences of a few collections, and a run
        // would need 67 million collections to wrap.
        int bs = (epoch << STRIPE_BITS) | stripe;
        Tracked t = count == 1 && elements == 0 && bytes == 0 ? new Tracked(o, key, bs) : new TrackedArray(o, key, bs, count, elements, bytes);
        synchronized (LOCKS[stripe]) {
            Tracked h = HEADS[stripe];
            t.next = h;
            if (h != null) h.prev = t;
            HEADS[stripe] = t;
            TRACKED[stripe * 8]++;
        }
    }

    /** Objects tracked now; read without the locks, so it may trail by the objects in flight. */
    static long tracked() {
        long n = 0;
        for (int i = 0; i < TRACKED.length; i += 8) n += TRACKED[i];
        return n;
    }

    private static void start() {
        if (!SelfCounted.on) listenForCollections();
        Thread d = new Thread("heapledger-liveness") {
            @Override
            public void run() {
                while (true) {
                    try {
                        Object r = QUEUE.remove(1000);
                        if (r != null) drain((Tracked) r);
                        updateEpoch();
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

    /** Refunds everything already enqueued. Safe from any thread: the queue hands each
     *  reference to one caller only; RECLAIMED is guarded by itself. */
    static void drainNow() {
        Object r = QUEUE.poll();
        if (r != null) drain((Tracked) r);
    }

    private static final int BATCH = 1024;

    /**
     * Refunds first and everything enqueued after it, in batches: a collection clears the
     * references of a whole young generation at once (about 200,000 on sunflow), and taking the
     * stripe lock and RECLAIMED's lock once per batch rather than once per reference took this
     * thread from 0.32 to 0.27 s of CPU on sunflow under sample:64. Only one thread drains at a
     * time, so the batch array is shared.
     */
    private static void drain(Tracked first) {
        synchronized (BATCH_REFS) {
            drainLocked(first);
        }
    }

    private static void drainLocked(Tracked first) {
        Tracked[] batch = BATCH_REFS;
        Tracked r = first;
        while (r != null) {
            int n = 0;
            do {
                batch[n++] = r;
            } while (n < BATCH && (r = (Tracked) QUEUE.poll()) != null);
            if (n == BATCH) r = (Tracked) QUEUE.poll();
            else r = null;
            refund(batch, n);
        }
    }

    private static final Tracked[] BATCH_REFS = new Tracked[BATCH];

    private static void refund(Tracked[] batch, int n) {
        // Unlink stripe by stripe: most references of a batch come from a few threads' stripes.
        int done = 0;
        long seen = 0; // stripes already unlinked, as bits
        for (int i = 0; i < n && done < n; i++) {
            int stripe = batch[i].stripe();
            if ((seen & (1L << stripe)) != 0) continue;
            seen |= 1L << stripe;
            synchronized (LOCKS[stripe]) {
                for (int j = i; j < n; j++) {
                    Tracked t = batch[j];
                    if (t.stripe() != stripe) continue;
                    done++;
                    // A snapshot's walk refunds what the collector cleared before the reference
                    // handler enqueues it (liveByKey): it is unlinked already, and counted.
                    BATCH_GONE[j] = !unlink(t, stripe);
                }
            }
        }
        synchronized (RECLAIMED) {
            for (int i = 0; i < n; i++) {
                Tracked t = batch[i];
                if (!BATCH_GONE[i]) RECLAIMED.add(t.key, t.count(), t.elements(), t.bytes());
                batch[i] = null;
            }
        }
    }

    /** Per entry of BATCH_REFS: refunded by a snapshot already. */
    private static final boolean[] BATCH_GONE = new boolean[BATCH];

    /** Takes t off its stripe's list, under the stripe's lock; false when it was off already. */
    private static boolean unlink(Tracked t, int stripe) {
        if (t.prev == null && t.next == null && HEADS[stripe] != t) return false;
        if (t.prev != null) t.prev.next = t.next;
        else HEADS[stripe] = t.next;
        if (t.next != null) t.next.prev = t.prev;
        t.prev = t.next = null;
        TRACKED[stripe * 8]--;
        return true;
    }

    private static java.util.List<java.lang.management.GarbageCollectorMXBean> gcs;

    /** Keeps the epoch current at every collection, so ages are exact without polling. */
    private static void listenForCollections() {
        try {
            javax.management.NotificationListener l = new javax.management.NotificationListener() {
                @Override
                public void handleNotification(javax.management.Notification n, Object handback) {
                    updateEpoch();
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

    /** Reads the collectors' counts; called by the drain thread and before snapshots. */
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
     * far behind the reference handler and the drain thread are.
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
    }

    /**
     * Walks the tracked objects: per key {distinct birth epochs (surviving generations),
     * objects, bytes} (unscaled) of the live ones, and live objects by age into ageHistogram.
     * Live are those tracked before mark, the epoch of the collection the figures are of (a
     * snapshot's full GC, or the last collection), whose referent it left: what it judged
     * reachable. Objects tracked since are young, in no figure; what the collector cleared and
     * nobody refunded yet is refunded here, so no live figure waits on the drain thread.
     */
    static Map<Long, long[]> liveByKey(long[] ageHistogram, int mark, Walk w) {
        Map<Long, HashSet<Integer>> born = new HashMap<Long, HashSet<Integer>>();
        Map<Long, long[]> out = new HashMap<Long, long[]>();
        int now = epoch & (-1 >>> STRIPE_BITS), before = mark & (-1 >>> STRIPE_BITS);
        java.util.ArrayList<Tracked> cleared = new java.util.ArrayList<Tracked>();
        for (int i = 0; i < STRIPES; i++) {
            synchronized (LOCKS[i]) {
                for (Tracked t = HEADS[i], next; t != null; t = next) {
                    next = t.next;
                    if (t.get() == null) {
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
                    if (v == null) out.put(t.key, v = new long[3]);
                    v[1] += t.count();
                    v[2] += t.bytes();
                    int age = now - t.born();
                    int bucket = age <= 0 ? 0 : Math.min(ageHistogram.length - 1, 32 - Integer.numberOfLeadingZeros(age));
                    ageHistogram[bucket] += t.count();
                }
            }
        }
        synchronized (RECLAIMED) {
            for (Tracked t : cleared) {
                RECLAIMED.add(t.key, t.count(), t.elements(), t.bytes());
                w.refunded += t.count();
            }
        }
        for (Map.Entry<Long, HashSet<Integer>> e : born.entrySet()) out.get(e.getKey())[0] = e.getValue().size();
        return out;
    }
}
