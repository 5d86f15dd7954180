package heapledger.rt;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * Account switches counted for --count-increments (issue 35): where a program's time in account
 * switching goes. A method of an accounted class that switches the thread's account counts one
 * SWITCHED per entry; a method whose switch the rewriter left out because every caller runs in
 * its account already counts one LEFT_OUT, so one run shows what switching cost before and after
 * leaving them out. Each thread counts into its own table (Acct.switches, keyed by kind and the
 * method's ID, a site of kind method), as it counts allocations; snapshots add the threads'
 * tables up and name the methods from the site tables.
 */
final class Switches {
    static final int SWITCHED = 0, LEFT_OUT = 1;

    /** The tables of threads that have ended (Ledger.merge folds them in). */
    static final Counts RETIRED = new Counts();

    private Switches() {}

    /** Counts one of kind for method on a's thread (the owner, the table's only writer). */
    static void note(Acct a, int method, int kind) {
        try {
            long key = Counts.key(kind, method, 0);
            Counts c = a.switches;
            if (c != null) {
                int s = c.find(key);
                if (s >= 0) {
                    c.table[s + 1]++;
                    return;
                }
            }
            // First sight of the method on this thread: the table is made or grown, which the
            // Object.<init> hook must not charge to the program.
            boolean was = ObjectHook.pause();
            try {
                if (c == null) a.switches = c = new Counts();
                c.add(key, 1, 0, 0);
            } finally {
                ObjectHook.resume(was);
            }
        } catch (Throwable e) {
            Ledger.drop(e);
        }
    }

    /**
     * The header lines of a snapshot taken with --count-increments: switches and switches_left_out
     * (totals), switches_by_method and switches_left_out_by_method (METHOD=N, most first,
     * separated by spaces: method names hold none), or none when no method of an accounted
     * class ran. total is every thread's tables added up (Ledger.switches).
     */
    static String[][] lines(Counts total) {
        if (total.size == 0) return new String[0][];
        List<long[]> rows = new ArrayList<long[]>();
        long[] tab = total.table;
        int[] methods = new int[total.size];
        int n = 0;
        for (int s = 0; s < tab.length; s += Counts.STRIDE) {
            if (tab[s] == 0) continue;
            long key = tab[s] - 1;
            rows.add(new long[] {Counts.account(key), Counts.site(key), tab[s + 1]});
            if (n < methods.length) methods[n++] = Counts.site(key);
        }
        methods = java.util.Arrays.copyOf(methods, n);
        java.util.Arrays.sort(methods);
        Snapshots.Tables t = Snapshots.Tables.load(methods);
        Collections.sort(rows, new Comparator<long[]>() {
            public int compare(long[] a, long[] b) {
                int c = Long.compare(b[2], a[2]);
                return c != 0 ? c : Long.compare(a[1], b[1]);
            }
        });
        long[] sum = new long[2];
        StringBuilder[] by = {new StringBuilder(), new StringBuilder()};
        for (long[] r : rows) {
            int kind = (int) r[0];
            if (kind != SWITCHED && kind != LEFT_OUT) continue;
            sum[kind] += r[2];
            String[] f = t.sites.get((int) r[1]);
            String name = f != null && f.length >= 3 ? f[2] : "<method " + r[1] + ">";
            if (by[kind].length() > 0) by[kind].append(' ');
            by[kind].append(name).append('=').append(r[2]);
        }
        return new String[][] {{"switches", String.valueOf(sum[SWITCHED])}, {"switches_left_out", String.valueOf(sum[LEFT_OUT])},
            {"switches_by_method", by[SWITCHED].toString()}, {"switches_left_out_by_method", by[LEFT_OUT].toString()}};
    }
}
