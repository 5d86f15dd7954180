package heapledger.rt;

import java.io.IOException;
import java.io.Writer;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeSet;

/**
 * The two snapshot encodings, documented in docs/formats.md. Both carry the same data: a
 * header, the names of the accounts and sites that occur, and one row per (account, site,
 * part) with objects (or arrays), array elements and bytes. Rows are sorted so that equal
 * runs give equal files.
 */
final class SnapshotFormat {
    static final int VERSION = 5;
    /**
     * The JSON twin's own version: 3 writes the integers of the header and of site lines as JSON
     * numbers (2 wrote them as strings), so a reader of 2 must refuse it rather than miss them.
     */
    static final int JSON_VERSION = 5;

    /** A snapshot's calling contexts (--context cct): the merged tree and its nodes in preorder. */
    static final class Contexts {
        final ContextTree tree;
        final java.util.ArrayList<Context> nodes;

        Contexts(ContextTree tree, java.util.ArrayList<Context> nodes) {
            this.tree = tree;
            this.nodes = nodes;
        }

        /** Adds the method IDs of the nodes to the sites a snapshot names. */
        void addMethods(TreeSet<Integer> sites) {
            java.util.Set<Integer> m = new java.util.HashSet<Integer>();
            ContextTree.methodsOf(nodes, m);
            sites.addAll(m);
        }
    }

    /** Header keys whose values are integers, written as JSON numbers. */
    private static final java.util.Set<String> INTEGER_KEYS =
            new java.util.HashSet<String>(Arrays.asList("pid", "uptime_ms", "threads", "dropped", "refunded_by_snapshot", "young", "increments", "switches", "switches_left_out"));

    static long[] rows(Counts c, Map<Integer, Long> sizes) {
        long[] t = c.table;
        int n = 0;
        for (int s = 0; s < t.length; s += Counts.STRIDE) if (t[s] != 0) n++;
        long[] keys = new long[n];
        n = 0;
        for (int s = 0; s < t.length; s += Counts.STRIDE) if (t[s] != 0) keys[n++] = t[s] - 1;
        Arrays.sort(keys);
        return keys;
    }

    static long bytes(long[] slot, int site, Map<Integer, Long> sizes) {
        if (slot[3] != 0 || slot[2] != 0) return slot[3]; // arrays carry their own bytes
        Long size = sizes.get(site);
        if (size == null || size < 0) return slot[1] == 0 ? 0 : -1;
        return size * slot[1];
    }

    static void text(Writer w, Counts c, LiveView lv, Contexts cx, EdgeProfile ep, Snapshots.Tables t, Map<Integer, Long> sizes,
            String reason, String[][] header) throws IOException {
        w.write("# heapledger snapshot " + VERSION + "\n");
        w.write("reason\t" + reason + "\n");
        for (String[] h : header) w.write(h[0] + "\t" + clean(h[1]) + "\n");
        if (lv != null) {
            StringBuilder ages = new StringBuilder("ages");
            for (long a : lv.ages) ages.append('\t').append(a);
            w.write(ages + "\n");
        }
        long[] keys = rows(c, sizes);
        TreeSet<Integer> accounts = new TreeSet<Integer>();
        TreeSet<Integer> sites = new TreeSet<Integer>();
        for (long k : keys) {
            accounts.add(Counts.account(k));
            sites.add(Counts.site(k));
        }
        if (cx != null) cx.addMethods(sites);
        for (int a : accounts) w.write("account\t" + a + "\t" + clean(accountName(t, a)) + "\n");
        for (int s : sites) {
            String[] f = t.sites.get(s);
            w.write("site\t" + s);
            if (f != null) for (String x : f) w.write("\t" + clean(x));
            w.write("\n");
        }
        long[] slot = new long[4];
        for (long k : keys) {
            read(c, k, slot);
            int site = Counts.site(k);
            long b = bytes(slot, site, sizes);
            w.write("alloc\t" + Counts.account(k) + "\t" + site + "\t" + Counts.part(k) + "\t" + slot[1] + "\t" + slot[2]
                    + "\t" + b);
            if (lv != null) {
                long[] l = lv.row(k, slot, b, sizes.get(site));
                for (long x : l) w.write("\t" + x);
            } else {
                w.write("\t-\t-\t-\t-\t-\t-\t-");
            }
            w.write("\n");
        }
        if (ep != null) ep.text(w);
        if (cx != null) ContextTree.text(w, cx.nodes, sizes);
        w.write("end\n");
    }

    static void json(Writer w, Counts c, LiveView lv, Contexts cx, EdgeProfile ep, Snapshots.Tables t, Map<Integer, Long> sizes,
            String reason, String[][] header) throws IOException {
        w.write("{\"format\":\"heapledger-snapshot\",\"version\":" + JSON_VERSION + ",\"reason\":" + q(reason));
        for (String[] h : header) w.write("," + q(h[0]) + ":" + value(h[1], INTEGER_KEYS.contains(h[0])));
        if (lv != null) {
            w.write(",\"ages\":[");
            for (int i = 0; i < lv.ages.length; i++) w.write((i == 0 ? "" : ",") + lv.ages[i]);
            w.write("]");
        }
        long[] keys = rows(c, sizes);
        TreeSet<Integer> accounts = new TreeSet<Integer>();
        TreeSet<Integer> sites = new TreeSet<Integer>();
        for (long k : keys) {
            accounts.add(Counts.account(k));
            sites.add(Counts.site(k));
        }
        if (cx != null) cx.addMethods(sites);
        w.write(",\"accounts\":{");
        boolean first = true;
        for (int a : accounts) {
            w.write((first ? "" : ",") + q(String.valueOf(a)) + ":" + q(accountName(t, a)));
            first = false;
        }
        w.write("},\"sites\":{");
        first = true;
        for (int s : sites) {
            w.write((first ? "" : ",") + q(String.valueOf(s)) + ":[");
            String[] f = t.sites.get(s);
            // KIND TYPE METHOD OFFSET LINE: the last two are integers.
            if (f != null) for (int i = 0; i < f.length; i++) w.write((i == 0 ? "" : ",") + value(f[i], i >= 3));
            w.write("]");
            first = false;
        }
        w.write("},\"allocations\":[");
        long[] slot = new long[4];
        first = true;
        for (long k : keys) {
            read(c, k, slot);
            int site = Counts.site(k);
            long b = bytes(slot, site, sizes);
            w.write((first ? "" : ",") + "{\"account\":" + Counts.account(k) + ",\"site\":" + site + ",\"part\":"
                    + Counts.part(k) + ",\"count\":" + slot[1] + ",\"elements\":" + slot[2] + ",\"bytes\":" + b);
            if (lv != null) {
                long[] l = lv.row(k, slot, b, sizes.get(site));
                w.write(",\"live\":" + l[0] + ",\"live_bytes\":" + l[1] + ",\"reclaimed\":" + l[2] + ",\"reclaimed_bytes\":"
                        + l[3] + ",\"untracked\":" + l[4] + ",\"generations\":" + l[5] + ",\"survived\":" + l[6]);
            }
            w.write("}");
            first = false;
        }
        w.write("]");
        if (ep != null) ep.json(w);
        if (cx != null) ContextTree.json(w, cx.nodes, sizes);
        w.write("}\n");
    }

    /**
     * What liveness knows at snapshot time; null when liveness is off. Take it before merging
     * the counts it is written beside (Snapshots.write), so each row's live objects are among
     * its counted ones.
     */
    static final class LiveView {
        final long[] ages = new long[16]; // live tracked objects by age in collections: 0, 1, 2-3, 4-7, ...
        Map<Long, long[]> live;
        Counts reclaimed = new Counts(), untracked = new Counts();
        /** Objects counted by path counters, which liveness never sees: untracked, not scaled by the rate. */
        Counts unseen = new Counts();
        /** Whether a full GC ran just before: the live figures are then exactly what it left reachable. */
        boolean gc;
        final Live.Walk walk = new Live.Walk();

        /**
         * The view after the full GC that started epoch gcMark, or, for -1, as of the last
         * collection: objects tracked since are in neither live nor reclaimed (Live.liveByKey).
         */
        static LiveView take(int gcMark) {
            if (Live.MODE == Live.OFF) return null;
            LiveView v = new LiveView();
            v.gc = gcMark >= 0;
            Live.updateEpoch();
            int mark = v.gc ? gcMark : Live.epoch;
            // Reclaimed is read before the walk, plus what the walk itself refunds: read after,
            // an object the walk counted live and a collection cleared once the walk had passed
            // its stripe would be reclaimed too. No sweep runs in between (Live.SWEEP), or one
            // that took objects off before the walk and refunded them after the read would leave
            // them in neither figure.
            synchronized (Live.SWEEP) {
                synchronized (Live.RECLAIMED) {
                    v.reclaimed.addAll(Live.RECLAIMED);
                }
                v.live = Live.liveByKey(v.ages, mark, previousMark, v.walk);
            }
            previousMark = mark;
            v.reclaimed.addAll(v.walk.refunds);
            synchronized (Live.UNTRACKED) {
                v.untracked.addAll(Live.UNTRACKED);
            }
            return v;
        }

        /** The mark of the last view taken (0 before the first): SURVIVED counts from it. */
        private static int previousMark;

        /** Header lines: whether a full GC preceded, and what the walk found besides the live. */
        String[][] header() {
            return new String[][] {
                {"gc_before", String.valueOf(gc)},
                {"refunded_by_snapshot", String.valueOf(walk.refunded * Live.RATE)},
                {"young", String.valueOf(walk.young * Live.RATE)},
            };
        }

        /**
         * {live, liveBytes, reclaimed, reclaimedBytes, untracked, generations, survived} for a
         * row (survived: the live objects already tracked when the snapshot before was taken,
         * which garbage in flight at this snapshot's collection is not). Live
         * and reclaimed come from the tracked objects, scaled by the sampling rate in sample
         * mode (so a site with fewer allocations than the rate has no estimate, not a guess).
         * Objects past the tracking bound are neither: the row says how many (untracked).
         */
        long[] row(long key, long[] slot, long bytes, Long objectSize) {
            long rate = Live.RATE;
            long[] rc = get(reclaimed, key), ut = get(untracked, key);
            long[] lv = live.get(key);
            if (lv == null) lv = new long[4];
            long size = objectSize == null || objectSize < 0 ? -1 : objectSize;
            boolean object = slot[2] == 0 && slot[3] == 0;
            long liveN = lv[1] * rate, recl = rc[0] * rate, untr = ut[0] * rate + Math.max(0, get(unseen, key)[0]);
            long liveBytes = object ? (size < 0 ? -1 : liveN * size) : lv[2] * rate;
            long reclBytes = object ? (size < 0 ? -1 : recl * size) : rc[2] * rate;
            return new long[] {liveN, liveBytes, recl, reclBytes, untr, lv[0], lv[3] * rate};
        }

        private static long[] get(Counts c, long key) {
            int s = c.find(key);
            if (s < 0) return new long[3];
            return new long[] {c.table[s + 1], c.table[s + 2], c.table[s + 3]};
        }
    }

    private static void read(Counts c, long key, long[] slot) {
        int s = c.slot(key);
        System.arraycopy(c.table, s, slot, 0, Counts.STRIDE);
    }

    static String accountName(Snapshots.Tables t, int a) {
        String n = t.accounts.get(a);
        if (n != null) return n;
        return a == 0 ? "<unaccounted>" : "account-" + a;
    }

    /** Tabs and newlines would break the line format; names never legitimately contain them. */
    static String clean(String s) {
        return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }

    /** s as a JSON number when it is meant as an integer and is one, else as a JSON string. */
    static String value(String s, boolean integer) {
        return integer && isInteger(s) ? s : q(s);
    }

    /** Whether s is an integer as JSON writes one: an optional minus, no leading zeros. */
    static boolean isInteger(String s) {
        int i = s.startsWith("-") ? 1 : 0;
        if (i == s.length() || (s.charAt(i) == '0' && s.length() > i + 1)) return false;
        for (; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') return false;
        }
        return true;
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
                    else b.append(ch);
            }
        }
        return b.append('"').toString();
    }
}
