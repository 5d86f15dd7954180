package heapledger.rt;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;

/**
 * The threads' calling-context trees merged into one, as a snapshot writes it (docs/formats.md,
 * "Calling contexts"). Contexts are merged by path: two threads' nodes of the same methods and
 * accounts from the root down are one node, their calls and allocation rows added. The trees of
 * threads that have ended are folded into {@link #RETIRED} when the thread registry forgets them
 * (Ledger.merge), as their counts are.
 *
 * <p>The running threads are not stopped: each node is read as it is at the moment (a node made
 * meanwhile may be missed, a row may be a few counts behind the flat counters read just before).
 */
final class ContextTree {
    /** The merged tree, its nodes Context objects only the snapshot writer touches. */
    final Context root = Context.root();
    /** Nodes of the threads' trees, and calls the bounds kept out of them. */
    long nodes, depthCut, nodeCut;

    /** The trees of threads that have ended; guarded by itself. */
    private static final ContextTree RETIRED = new ContextTree();

    /** Adds thread a's tree and bound counters. */
    void add(Acct a) {
        nodes += a.nodes;
        depthCut += a.depthCut;
        nodeCut += a.nodeCut;
        merge(a.root, root);
    }

    /** Folds the tree of a thread that has ended into the retired tree. */
    static void retire(Acct a) {
        synchronized (RETIRED) {
            RETIRED.add(a);
        }
    }

    /** Adds the retired threads' tree. */
    void addRetired() {
        synchronized (RETIRED) {
            nodes += RETIRED.nodes;
            depthCut += RETIRED.depthCut;
            nodeCut += RETIRED.nodeCut;
            merge(RETIRED.root, root);
        }
    }

    /**
     * Adds the tree below from into the tree below into, by path. Iterative: a tree may be as
     * deep as the depth limit allows. A child entry whose parent is not its node is a folded
     * recursion's ancestor, not a child.
     */
    private static void merge(Context from, Context into) {
        ArrayList<Context[]> work = new ArrayList<Context[]>();
        work.add(new Context[] {from, into});
        while (!work.isEmpty()) {
            Context[] w = work.remove(work.size() - 1);
            Context f = w[0], t = w[1];
            t.calls += f.calls;
            long[] r = f.rows;
            if (r != null) {
                for (int s = 0; s < r.length; s += Counts.STRIDE) {
                    if (r[s] != 0) t.add(r[s] - 1, r[s + 1], r[s + 2], r[s + 3]);
                }
            }
            for (Context k : f.kids) {
                if (k != null && k.parent == f) work.add(new Context[] {k, childOf(t, k.method, k.account)});
            }
            Context o = f.overflow;
            if (o != null) {
                if (t.overflow == null) t.overflow = new Context(t, -1, o.account);
                work.add(new Context[] {o, t.overflow});
            }
        }
    }

    private static Context childOf(Context t, int method, int account) {
        Context c = t.find(method, account);
        if (c == null) {
            c = new Context(t, method, account);
            t.put(c);
        }
        return c;
    }

    /** The tree's nodes in preorder, children by method and account, the root first. */
    ArrayList<Context> preorder() {
        ArrayList<Context> out = new ArrayList<Context>();
        ArrayList<Context> stack = new ArrayList<Context>();
        stack.add(root);
        Comparator<Context> order = new Comparator<Context>() {
            @Override
            public int compare(Context a, Context b) {
                if (a.method != b.method) return a.method < b.method ? 1 : -1; // popped last first
                return a.account < b.account ? 1 : a.account == b.account ? 0 : -1;
            }
        };
        while (!stack.isEmpty()) {
            Context c = stack.remove(stack.size() - 1);
            out.add(c);
            ArrayList<Context> kids = new ArrayList<Context>();
            for (Context k : c.kids) {
                if (k != null && k.parent == c) kids.add(k);
            }
            if (c.overflow != null) kids.add(c.overflow);
            java.util.Collections.sort(kids, order);
            stack.addAll(kids);
        }
        return out;
    }

    /** The method IDs of the tree's nodes, for the site table lines that name them. */
    static void methodsOf(ArrayList<Context> nodes, java.util.Set<Integer> into) {
        for (Context c : nodes) {
            if (c.method > 0) into.add(c.method);
        }
    }

    /** The header line's value: the mode, bounds and what they cut. */
    String describe() {
        return Context.DESCRIPTION + " threads_nodes=" + nodes + " depth_cut_calls=" + depthCut + " node_cut_calls=" + nodeCut;
    }

    /** Bytes of a node's row, as the flat rows have them (SnapshotFormat.bytes). */
    private static long bytes(long[] r, int s, Map<Integer, Long> sizes) {
        long[] slot = {r[s], r[s + 1], r[s + 2], r[s + 3]};
        return SnapshotFormat.bytes(slot, Counts.site(r[s] - 1), sizes);
    }

    /** Each node's sorted rows: key+1 of the row at each index of the node's table, sorted. */
    private static int[] sortedRows(long[] r) {
        int n = 0;
        for (int s = 0; s < r.length; s += Counts.STRIDE) if (r[s] != 0) n++;
        Integer[] idx = new Integer[n];
        n = 0;
        for (int s = 0; s < r.length; s += Counts.STRIDE) if (r[s] != 0) idx[n++] = s;
        final long[] rr = r;
        Arrays.sort(idx, new Comparator<Integer>() {
            @Override
            public int compare(Integer a, Integer b) {
                return Long.compare(rr[a], rr[b]);
            }
        });
        int[] out = new int[n];
        for (int i = 0; i < n; i++) out[i] = idx[i];
        return out;
    }

    /** The node and context allocation lines of the text format. */
    static void text(Writer w, ArrayList<Context> nodes, Map<Integer, Long> sizes) throws IOException {
        java.util.IdentityHashMap<Context, Integer> ids = new java.util.IdentityHashMap<Context, Integer>();
        for (int i = 0; i < nodes.size(); i++) ids.put(nodes.get(i), i);
        for (int i = 1; i < nodes.size(); i++) {
            Context c = nodes.get(i);
            w.write("node\t" + i + "\t" + ids.get(c.parent) + "\t" + c.method + "\t" + c.account + "\t" + c.calls + "\n");
        }
        for (int i = 0; i < nodes.size(); i++) {
            long[] r = nodes.get(i).rows;
            if (r == null) continue;
            for (int s : sortedRows(r)) {
                long k = r[s] - 1;
                w.write("calloc\t" + i + "\t" + Counts.account(k) + "\t" + Counts.site(k) + "\t" + Counts.part(k) + "\t" + r[s + 1]
                        + "\t" + r[s + 2] + "\t" + bytes(r, s, sizes) + "\n");
            }
        }
    }

    /** The "contexts" object of the JSON twin: nodes as [id, parent, method, account, calls], rows as the text's fields. */
    static void json(Writer w, ArrayList<Context> nodes, Map<Integer, Long> sizes) throws IOException {
        java.util.IdentityHashMap<Context, Integer> ids = new java.util.IdentityHashMap<Context, Integer>();
        for (int i = 0; i < nodes.size(); i++) ids.put(nodes.get(i), i);
        w.write(",\"contexts\":{\"nodes\":[");
        for (int i = 1; i < nodes.size(); i++) {
            Context c = nodes.get(i);
            w.write((i == 1 ? "" : ",") + "[" + i + "," + ids.get(c.parent) + "," + c.method + "," + c.account + "," + c.calls + "]");
        }
        w.write("],\"allocations\":[");
        boolean first = true;
        for (int i = 0; i < nodes.size(); i++) {
            long[] r = nodes.get(i).rows;
            if (r == null) continue;
            for (int s : sortedRows(r)) {
                long k = r[s] - 1;
                w.write((first ? "" : ",") + "[" + i + "," + Counts.account(k) + "," + Counts.site(k) + "," + Counts.part(k) + ","
                        + r[s + 1] + "," + r[s + 2] + "," + bytes(r, s, sizes) + "]");
                first = false;
            }
        }
        w.write("]}");
    }
}
