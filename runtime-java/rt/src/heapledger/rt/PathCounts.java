package heapledger.rt;

import java.util.HashMap;
import java.util.Map;

/**
 * Turns the rows of path counters (--counters paths) back into the rows of the sites they stand
 * for, at snapshot time, so that snapshots hold the same per-(account, site) rows whichever way
 * the program was counted. A path counter's table line (kind "path") lists its sites as
 * "OFFSET*MULTIPLICITY" pairs, OFFSET from the counter's own ID (docs/formats.md); its count
 * times each multiplicity goes to that site's count in the same account. Corrections have
 * negative multiplicities, and a site whose counts add up to nothing has no row, as when it
 * is counted by itself and never ran.
 */
final class PathCounts {
    /** The sites the last expand() gave counts to, each with a path counter that counted it. */
    final Map<Integer, Integer> counter = new HashMap<Integer, Integer>();
    /** Per method, the counter increments that ran (the rows of sites and counters before expansion). */
    final Map<String, Long> increments = new HashMap<String, Long>();
    /**
     * Per (account, site, 0), the objects the last expand() counted from path counters: no
     * object was seen there, so liveness tracked none of them (LiveView counts them untracked).
     */
    final Counts unseen = new Counts();
    /** Sites whose class the last noteClasses() could not name: their bytes are unknown (-1). */
    final java.util.List<String> unsized = new java.util.ArrayList<String>();

    /** Whether tell() said it. */
    private static boolean told;

    /**
     * Says once on standard error, when liveness or a budget is on (Acct.pathsBlind; the first
     * path counter's slow path calls this only then), that code counted by path counters (c's
     * among it) hides its objects from them: rewritten with --counters paths, it calls no
     * counting method with the object, and only a rewrite with --counters sites can track them.
     * The snapshots say it too (header line unseen_objects).
     */
    static void tell(Class<?> c) {
        synchronized (PathCounts.class) {
            if (told) return;
            told = true;
        }
        Snapshots.warn("liveness " + Live.describe() + (Budget.configured() ? " and budgets" : "") + " cannot see the objects "
                + c.getName() + " and any other class rewritten with --counters paths count by path counters: snapshots"
                + " count them as untracked and budgets miss them; rewrite with --counters sites to track them");
    }

    /** The header line of a snapshot with path-counted objects that liveness or budgets could not see, or null. */
    String[] unseenLine() {
        if (!Acct.pathsBlind()) return null;
        long objects = 0, rows = 0;
        long[] tab = unseen.table;
        for (int s = 0; s < tab.length; s += Counts.STRIDE) {
            if (tab[s] == 0 || tab[s + 1] == 0) continue;
            objects += tab[s + 1];
            rows++;
        }
        if (rows == 0) return null;
        return new String[] {"unseen_objects", objects + " objects of " + rows + " rows counted by path counters (--counters paths):"
                + " liveness and budgets cannot see them, the rows count them as untracked; rewrite with --counters sites to track them"};
    }

    /** The header line naming the path-counted sites whose bytes are unknown, or null. */
    String[] unsizedLine() {
        if (unsized.isEmpty()) return null;
        return new String[] {"unsized_sites", unsized.size() + " sites counted by path counters whose class their counting class's"
                + " loader could not name, so their bytes are unknown (-1); the first: " + unsized.get(0)};
    }

    /**
     * c with every path counter's row replaced by its sites' rows, or c itself when it has none.
     * t names at least the sites of c.
     */
    Counts expand(Counts c, Snapshots.Tables t) {
        long[] tab = c.table;
        Map<Long, long[]> rows = new HashMap<Long, long[]>();
        boolean any = false;
        for (int s = 0; s < tab.length; s += Counts.STRIDE) {
            if (tab[s] == 0) continue;
            long key = tab[s] - 1;
            int id = Counts.site(key);
            String[] site = t.sites.get(id);
            if (site != null && site.length >= 3 && Counts.part(key) == 0) {
                Long had = increments.get(site[2]);
                increments.put(site[2], (had == null ? 0 : had) + tab[s + 1]);
            }
            // A chord counter of a profiling run (kind edge) is a path counter whose TYPE starts
            // with three words of its own (EdgeProfile).
            boolean edge = site != null && "edge".equals(site[0]);
            if (site == null || site.length < 2 || !"path".equals(site[0]) && !edge) {
                add(rows, key, tab[s + 1], tab[s + 2], tab[s + 3]);
                continue;
            }
            any = true;
            String[] parts = site[1].split(" ");
            for (int w = edge ? 3 : 0; w < parts.length; w++) {
                String part = parts[w];
                int star = part.indexOf('*');
                if (star <= 0) continue;
                int target = id + Integer.parseInt(part.substring(0, star));
                long mult = Long.parseLong(part.substring(star + 1));
                long k = Counts.key(Counts.account(key), target, 0);
                add(rows, k, tab[s + 1] * mult, 0, 0);
                unseen.add(k, tab[s + 1] * mult, 0, 0);
                if (!counter.containsKey(target)) counter.put(target, id);
            }
        }
        if (!any) return c;
        Counts out = new Counts();
        for (Map.Entry<Long, long[]> e : rows.entrySet()) {
            long[] v = e.getValue();
            if (v[0] != 0 || v[1] != 0 || v[2] != 0) out.add(e.getKey(), v[0], v[1], v[2]);
        }
        return out;
    }

    /** The header lines the path counters add: unseen_objects, unsized_sites and, when asked, the increments. */
    String[][] lines(boolean increments) {
        java.util.List<String[]> l = new java.util.ArrayList<String[]>();
        String[] u = unseenLine();
        if (u != null) l.add(u);
        if ((u = unsizedLine()) != null) l.add(u);
        if (increments) l.addAll(java.util.Arrays.asList(incrementLines()));
        return l.toArray(new String[0][]);
    }

    /**
     * The header lines of --count-increments: the total, and increments_by_method, each method
     * as METHOD=N, most first, separated by spaces (method names hold none).
     */
    String[][] incrementLines() {
        java.util.List<Map.Entry<String, Long>> l = new java.util.ArrayList<Map.Entry<String, Long>>(increments.entrySet());
        java.util.Collections.sort(l, new java.util.Comparator<Map.Entry<String, Long>>() {
            public int compare(Map.Entry<String, Long> a, Map.Entry<String, Long> b) {
                int c = Long.compare(b.getValue(), a.getValue());
                return c != 0 ? c : a.getKey().compareTo(b.getKey());
            }
        });
        long total = 0;
        StringBuilder by = new StringBuilder();
        for (Map.Entry<String, Long> e : l) {
            total += e.getValue();
            if (by.length() > 0) by.append(' ');
            by.append(e.getKey()).append('=').append(e.getValue());
        }
        return new String[][] {{"increments", String.valueOf(total)}, {"increments_by_method", by.toString()}};
    }

    private static void add(Map<Long, long[]> rows, long key, long count, long elements, long bytes) {
        long[] v = rows.get(key);
        if (v == null) rows.put(key, v = new long[3]);
        v[0] += count;
        v[1] += elements;
        v[2] += bytes;
    }

    /**
     * Notes the class of each site counted by a path counter for the size model, by its name in
     * the loader of the class whose code counted it (no object was seen at the site). t names
     * the sites now counted.
     */
    void noteClasses(Snapshots.Tables t) {
        for (Map.Entry<Integer, Integer> e : counter.entrySet()) {
            int site = e.getKey();
            if (SiteClasses.get(site) != null) continue;
            String[] f = t.sites.get(site);
            Class<?> by = SiteClasses.get(e.getValue());
            if (f == null || f.length < 2 || by == null) continue;
            try {
                SiteClasses.put(site, Class.forName(f[1], false, by.getClassLoader()));
            } catch (Throwable x) {
                // The code that counted it resolved the class through that loader, so this is
                // rare (a hidden class, a loader that no longer answers): said, bytes -1.
                unsized.add(f[1] + " at site " + site + " (" + x + ")");
            }
        }
    }
}
