import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a heap of about N objects and dumps it: Generator N DUMP.hprof.
 *
 * The shape mixes what real heaps hold and what hurts heap analysers: a 100,000-node doubly
 * linked list (deep chains make naive dominator iteration quadratic), binary trees, hash maps
 * with shared values, object arrays and byte arrays. Deterministic: the same N gives the same
 * structure.
 */
public class Generator {
    static final class DNode { DNode prev, next; Object value; }
    static final class Tree { Tree left, right; int v; }
    static final class Item { Item next; long id; byte[] bytes; }

    static final List<Object> KEEP = new ArrayList<>();

    static Tree tree(int depth, int[] budget) {
        if (depth == 0 || budget[0] <= 0) return null;
        budget[0]--;
        Tree t = new Tree();
        t.v = depth;
        t.left = tree(depth - 1, budget);
        t.right = tree(depth - 1, budget);
        return t;
    }

    public static void main(String[] args) throws Exception {
        long target = Long.parseLong(args[0]);
        String out = args[1];
        long made = 0;
        // The long doubly linked list: 100,000 nodes, each with a small Integer value.
        DNode head = null, prev = null;
        for (int i = 0; i < 100_000; i++) {
            DNode n = new DNode();
            n.value = Integer.valueOf(100_000 + i);
            n.prev = prev;
            if (prev == null) head = n; else prev.next = n;
            prev = n;
            made += 2;
        }
        KEEP.add(head);
        long rest = Math.max(0, target - made);
        // A quarter in trees of ~64k nodes.
        long treeNodes = rest / 4;
        while (treeNodes > 0) {
            int[] budget = {(int) Math.min(treeNodes, 65_535)};
            int start = budget[0];
            KEEP.add(tree(16, budget));
            treeNodes -= start - budget[0];
            made += start - budget[0];
        }
        // A quarter in hash maps (entry + key per mapping) with values shared among keys.
        long mapObjects = rest / 4;
        Object[] shared = new Object[1000];
        for (int i = 0; i < shared.length; i++) shared[i] = new int[] {i};
        while (mapObjects > 0) {
            Map<Integer, Object> m = new HashMap<>();
            for (int i = 0; i < 10_000 && mapObjects > 0; i++) {
                m.put(1_000_000 + i, shared[i % shared.length]);
                mapObjects -= 2;
                made += 2;
            }
            KEEP.add(m);
        }
        // The rest: chains of items, each with a byte array, hung off object arrays.
        while (made < target) {
            Object[] arr = new Object[1000];
            made++;
            for (int i = 0; i < arr.length && made < target; i++) {
                Item it = new Item();
                it.id = made;
                it.bytes = new byte[8 + (int) (made % 32)];
                if (i > 0 && (i & 3) != 0) it.next = (Item) arr[i - 1];
                arr[i] = it;
                made += 2;
            }
            KEEP.add(arr);
        }
        System.out.println("built about " + made + " objects; dumping to " + out);
        ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class).dumpHeap(out, true);
    }
}
