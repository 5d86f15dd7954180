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
            Acct.multi(m, 2, 3, 2 | 'I' << 8, MULTI_SITE); // new int[2][3]
            return;
        }
        throw new IllegalArgumentException(mode);
    }
}
