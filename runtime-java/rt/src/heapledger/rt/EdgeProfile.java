package heapledger.rt;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The edge profile of a profiling run (--counters edges; docs/instrumentation.md, "Profiles"):
 * per method whose chord counters counted, the counts of all its chords, zeros included, as the
 * snapshot's "edges" lines (docs/formats.md). A chord counter's table line (kind "edge") starts
 * its TYPE with "FROM>TO I/N HASH": its edge by block start offsets (-1 for the virtual node),
 * its place among the method's N chords, whose IDs follow one another, and the hash of the
 * method's code. A later rewrite (--profile) derives every edge's count from the chords'.
 */
final class EdgeProfile {
    /** One method's line. */
    static final class Method {
        final String cls, name, hash;
        final String[] edges;
        final long[] counts;

        Method(String cls, String name, String hash, int n) {
            this.cls = cls;
            this.name = name;
            this.hash = hash;
            this.edges = new String[n];
            this.counts = new long[n];
        }
    }

    final List<Method> methods = new ArrayList<Method>();

    /**
     * The profile of c, the merged counts before the path counters are expanded, whose sites t
     * names; null when no chord counter counted. Its lines hold all the chords of each method,
     * read from the tables again (t names only the sites that counted). A failure is counted
     * as dropped, and the snapshot is written without the profile.
     */
    static EdgeProfile of(Counts c, Snapshots.Tables t) {
        try {
            return collect(c, t);
        } catch (Throwable e) {
            Ledger.drop(e);
            return null;
        }
    }

    private static EdgeProfile collect(Counts c, Snapshots.Tables t) {
        Map<Integer, Long> count = new HashMap<Integer, Long>();
        TreeSet<Integer> wanted = new TreeSet<Integer>();
        long[] tab = c.table;
        for (int s = 0; s < tab.length; s += Counts.STRIDE) {
            if (tab[s] == 0) continue;
            int id = Counts.site(tab[s] - 1);
            String[] tag = tag(t.sites.get(id));
            if (tag == null) continue;
            Long had = count.get(id);
            count.put(id, (had == null ? 0 : had) + tab[s + 1]);
            int[] place = place(tag[1]);
            if (place == null) continue;
            for (int k = 0; k < place[1]; k++) wanted.add(id - place[0] + k);
        }
        if (count.isEmpty()) return null;
        int[] ids = new int[wanted.size()];
        int n = 0;
        for (int id : wanted) ids[n++] = id;
        Snapshots.Tables all = Snapshots.Tables.load(ids);
        EdgeProfile p = new EdgeProfile();
        Set<Integer> done = new HashSet<Integer>();
        for (int id : new TreeSet<Integer>(count.keySet())) {
            String[] tag = tag(all.sites.get(id));
            int[] place = tag == null ? null : place(tag[1]);
            if (place == null || !done.add(id - place[0])) continue;
            Method m = method(all, id - place[0], place[1], count);
            if (m != null) p.methods.add(m);
        }
        Collections.sort(p.methods, new Comparator<Method>() {
            public int compare(Method a, Method b) {
                int k = a.cls.compareTo(b.cls);
                if (k == 0) k = a.name.compareTo(b.name);
                return k != 0 ? k : a.hash.compareTo(b.hash);
            }
        });
        return p;
    }

    /**
     * The line of the method whose n chord counters start at ID first, or null when the tables
     * do not name them all alike (one method, one hash, each its own place).
     */
    private static Method method(Snapshots.Tables t, int first, int n, Map<Integer, Long> count) {
        String[] f = t.sites.get(first);
        String[] tag = tag(f);
        if (tag == null || f.length < 3) return null;
        String method = f[2];
        int paren = method.indexOf('(');
        int dot = paren < 0 ? -1 : method.lastIndexOf('.', paren);
        if (dot < 0) return null;
        Method m = new Method(method.substring(0, dot), method.substring(dot + 1), tag[2], n);
        for (int k = 0; k < n; k++) {
            String[] fk = t.sites.get(first + k);
            String[] tk = tag(fk);
            int[] place = tk == null ? null : place(tk[1]);
            if (place == null || place[0] != k || place[1] != n || !tk[2].equals(m.hash) || !method.equals(fk[2])) return null;
            m.edges[k] = tk[0];
            Long got = count.get(first + k);
            m.counts[k] = got == null ? 0 : got;
        }
        return m;
    }

    /** The first three words of a kind edge table line's TYPE, or null for any other line. */
    private static String[] tag(String[] site) {
        if (site == null || site.length < 3 || !"edge".equals(site[0])) return null;
        String[] w = site[1].split(" ");
        if (w.length < 3 || w[2].indexOf('*') >= 0) return null;
        int gt = w[0].indexOf('>');
        try {
            Integer.parseInt(w[0].substring(0, gt));
            Integer.parseInt(w[0].substring(gt + 1));
        } catch (RuntimeException e) {
            return null; // not FROM>TO
        }
        return new String[] {w[0], w[1], w[2]};
    }

    /** "I/N" as {I, N}, or null. */
    private static int[] place(String s) {
        int slash = s.indexOf('/');
        try {
            int i = Integer.parseInt(s.substring(0, slash)), n = Integer.parseInt(s.substring(slash + 1));
            return i >= 0 && i < n ? new int[] {i, n} : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The text lines: "edges CLASS METHOD HASH FROM>TO=COUNT ...". */
    void text(Writer w) throws IOException {
        for (Method m : methods) {
            StringBuilder b = new StringBuilder("edges\t").append(SnapshotFormat.clean(m.cls)).append('\t')
                    .append(SnapshotFormat.clean(m.name)).append('\t').append(SnapshotFormat.clean(m.hash)).append('\t');
            for (int k = 0; k < m.edges.length; k++) {
                if (k > 0) b.append(' ');
                b.append(m.edges[k]).append('=').append(m.counts[k]);
            }
            w.write(b.append('\n').toString());
        }
    }

    /** The JSON member: ,"edges":[{"class":..,"method":..,"hash":..,"edges":[[FROM,TO,COUNT],...]},...]. */
    void json(Writer w) throws IOException {
        w.write(",\"edges\":[");
        for (int i = 0; i < methods.size(); i++) {
            Method m = methods.get(i);
            w.write((i == 0 ? "" : ",") + "{\"class\":" + SnapshotFormat.q(m.cls) + ",\"method\":" + SnapshotFormat.q(m.name)
                    + ",\"hash\":" + SnapshotFormat.q(m.hash) + ",\"edges\":[");
            for (int k = 0; k < m.edges.length; k++) {
                int gt = m.edges[k].indexOf('>');
                w.write((k == 0 ? "" : ",") + "[" + m.edges[k].substring(0, gt) + "," + m.edges[k].substring(gt + 1) + "," + m.counts[k] + "]");
            }
            w.write("]}");
        }
        w.write("]");
    }
}
