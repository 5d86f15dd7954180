package heapledger.rt;

/**
 * Drives the runtime the way rewritten code does, with known answers, so the Go test beside
 * this file can check exact numbers in the snapshot: Figure 3 of the array-profiling paper,
 * principal/agent account switching, and many threads counting at once.
 */
public class SelfTest {
    static final int ARRAY_SITE = 1, OBJECT_SITE = 2, MULTI_SITE = 3, FIG3_BASE = 10;

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        if (mode.equals("table")) {
            // table FILE ID...: the accounts, then the wanted sites' fields as read back.
            int[] wanted = new int[args.length - 2];
            for (int i = 2; i < args.length; i++) wanted[i - 2] = Integer.parseInt(args[i]);
            java.util.Arrays.sort(wanted);
            Snapshots.Tables t = new Snapshots.Tables();
            java.io.InputStream in = new java.io.FileInputStream(args[1]);
            try {
                t.read(in, args[1], wanted);
            } finally {
                in.close();
            }
            StringBuilder out = new StringBuilder();
            for (java.util.Map.Entry<Integer, String> e : new java.util.TreeMap<Integer, String>(t.accounts).entrySet()) {
                out.append("account ").append(e.getKey()).append(' ').append(e.getValue()).append('\n');
            }
            for (java.util.Map.Entry<Integer, String[]> e : new java.util.TreeMap<Integer, String[]>(t.sites).entrySet()) {
                out.append("site ").append(e.getKey()).append(' ').append(String.join("|", e.getValue())).append('\n');
            }
            System.out.print(out);
            return;
        }
        if (mode.equals("iso")) {
            // One line per millisecond count on stdin: the snapshot header's UTC timestamp.
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, "UTF-8"));
            StringBuilder out = new StringBuilder();
            for (String line; (line = in.readLine()) != null; ) out.append(Snapshots.isoUTC(Long.parseLong(line.trim()))).append('\n');
            System.out.print(out);
            return;
        }
        if (mode.equals("sizes")) {
            // The model's header, reference size and array base and where they came from, the
            // VM's as Unsafe gives them; then per class named, the layout rule's instance size
            // and the one Unsafe's field offsets give.
            Class<?> uc = Class.forName("sun.misc.Unsafe");
            java.lang.reflect.Field tf = uc.getDeclaredField("theUnsafe");
            tf.setAccessible(true);
            Object u = tf.get(null);
            int scale = (Integer) uc.getMethod("arrayIndexScale", Class.class).invoke(u, Object[].class);
            java.lang.reflect.Method off = uc.getMethod("objectFieldOffset", java.lang.reflect.Field.class);
            java.lang.reflect.Method baseOf = uc.getMethod("arrayBaseOffset", Class.class);
            // The header ends where a lone int goes.
            long header = (Long) off.invoke(u, OneInt.class.getDeclaredField("x"));
            // Bytes of an Object[3], int[1], long[1] and byte[5]: the model's, then the VM's.
            long[] vmArrays = {
                Sizes.align((Integer) baseOf.invoke(u, Object[].class) + 3L * scale),
                Sizes.align((Integer) baseOf.invoke(u, int[].class) + 4L),
                Sizes.align((Integer) baseOf.invoke(u, long[].class) + 8L),
                Sizes.align((Integer) baseOf.invoke(u, byte[].class) + 5L),
            };
            System.out.println("model " + Sizes.OBJECT_HEADER + " " + Sizes.REF + " " + Sizes.array(3, Sizes.REF) + " " + Sizes.array(1, 4)
                    + " " + Sizes.array(1, 8) + " " + Sizes.array(5, 1) + " " + Sizes.SOURCE);
            System.out.println("vm " + header + " " + scale + " " + vmArrays[0] + " " + vmArrays[1] + " " + vmArrays[2] + " " + vmArrays[3]);
            for (int i = 1; i < args.length; i++) {
                Class<?> c = Class.forName(args[i]);
                long end = header;
                for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                    for (java.lang.reflect.Field f : k.getDeclaredFields()) {
                        if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) continue;
                        Class<?> t = f.getType();
                        int size = !t.isPrimitive() ? scale : t == long.class || t == double.class ? 8 : t == int.class || t == float.class ? 4 : t == short.class || t == char.class ? 2 : 1;
                        end = Math.max(end, (Long) off.invoke(u, f) + size);
                    }
                }
                System.out.println(args[i] + " " + Sizes.layout(c) + " " + Sizes.align(end));
            }
            return;
        }
        if (mode.equals("figure3")) {
            int[][] rows = {{2, 3, 5}, {2, 3, 0}, {2, 0, 5}, {0, 3, 5}};
            for (char base : new char[] {'L', 'I'}) {
                for (int[] d : rows) {
                    long[] r = Acct.multiArrays(d, 3 | base << 8);
                    System.out.println((base == 'L' ? "Object" : "int") + "[" + d[0] + "][" + d[1] + "][" + d[2] + "] "
                            + r[0] + " " + r[1] + (r[3] >= 0 ? " | " + r[3] + " " + r[4] : ""));
                }
            }
            // allocDim < arrayDim: only reference arrays are allocated.
            long[] r = Acct.multiArrays(new int[] {2, 3}, 3 | 'I' << 8);
            System.out.println("int[2][3][] " + r[0] + " " + r[1] + (r[3] >= 0 ? " | " + r[3] : ""));
            return;
        }
        if (mode.equals("threads")) {
            final int threads = Integer.parseInt(args[1]);
            final int per = Integer.parseInt(args[2]);
            Thread[] ts = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                final int account = 1 + i % 3;
                ts[i] = new Thread() {
                    @Override
                    public void run() {
                        Acct t = Ledger.here();
                        int saved = t.account;
                        t.account = account;
                        for (int j = 0; j < per; j++) {
                            Object o = new Object();
                            Acct.object(o, t, OBJECT_SITE);
                            int[] a = new int[j % 10];
                            Acct.array(a, t, ARRAY_SITE);
                        }
                        t.account = saved;
                    }
                };
                ts[i].start();
            }
            for (Thread t : ts) t.join();
            // The main thread allocates with no account set: <unaccounted>.
            Acct m = Ledger.here();
            Acct.multi(new int[2][3], m, 2, 3, 2 | 'I' << 8, MULTI_SITE); // new int[2][3]
            return;
        }
        if (mode.equals("sparse")) {
            // Sites of jars rewritten apart lie far apart (docs/formats.md, "Site IDs"): for each
            // base given, 40 sites from it, site k counting k+1 objects ('*' form, account 2)
            // and k+1 int[3] (full switching, account 3), on two threads.
            final int[] bases = new int[args.length - 1];
            for (int i = 1; i < args.length; i++) bases[i - 1] = Integer.parseInt(args[i]);
            Thread[] ts = new Thread[2];
            for (int n = 0; n < ts.length; n++) {
                ts[n] = new Thread() {
                    @Override
                    public void run() {
                        Acct t = null;
                        for (int b : bases) {
                            for (int k = 0; k < 40; k++) {
                                for (int j = 0; j <= k; j++) t = Acct.object(new Object(), t, 2, b + k);
                            }
                        }
                        int saved = t.account;
                        t.account = 3;
                        for (int b : bases) {
                            for (int k = 0; k < 40; k++) {
                                for (int j = 0; j <= k; j++) Acct.array(new int[3], t, b + k);
                            }
                        }
                        t.account = saved;
                    }
                };
                ts[n].start();
            }
            for (Thread t : ts) t.join();
            return;
        }
        if (mode.equals("live")) {
            // 1000 objects and 1000 int[10] at two sites; 100 of each kept. Then a demand
            // snapshot after a full GC must see exactly 100 live of each, 900 reclaimed.
            Acct t = Ledger.here();
            t.account = 1;
            Object[] keep = new Object[200];
            for (int i = 0; i < 1000; i++) {
                Object o = new Object();
                Acct.object(o, t, OBJECT_SITE);
                int[] a = new int[10];
                Acct.array(a, t, ARRAY_SITE);
                if (i % 10 == 0) {
                    keep[i / 10] = o;
                    keep[100 + i / 10] = a;
                }
            }
            int before = Live.epoch;
            System.gc(); // the survivors get older than the next batch
            // GC notifications arrive on their own thread: wait (bounded) for the epoch to move.
            for (int i = 0; i < 500 && Live.epoch == before; i++) Thread.sleep(10);
            for (int i = 0; i < 50; i++) {
                Object o = new Object();
                Acct.object(o, t, OBJECT_SITE);
                keep[i] = null; // 50 of the first batch die
                keep[i] = o;    // replaced by 50 of a second generation
            }
            System.out.println(Snapshots.write("demand"));
            System.out.println(keep.length);
            return;
        }
        throw new IllegalArgumentException(mode);
    }

    // Shapes whose layout has gaps: a lone long after the header, a byte before a long, and
    // subclasses that fill (or cannot fill) their superclasses' gaps.
    static class OnlyLong { long a; }
    static class ByteLong { byte b; long l; }
    static class Sub extends ByteLong { int i; Object o; short s; }
    static class SubSub extends Sub { byte x; long y; char c; }
    static class Mixed { boolean z; char c; double d; Object a, b; int i; }
    static class Refs extends OnlyLong { Object a, b, c; }
    static class Empty {}
    static class OneInt { int x; }
    static class Bytes extends Empty { byte a, b, c, d, e; }
}
