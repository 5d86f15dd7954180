package objinit;

/**
 * The steady-state cost per object of the Object.<init> hook (bench-objinit.sh): N small objects
 * constructed in a loop and kept in a ring, so the JIT cannot scalar-replace them, three rounds;
 * the last round, after compilation, is the figure.
 */
public class Alloc {
    static final class P {
        final int x;

        P(int x) {
            this.x = x;
        }
    }

    public static void main(String[] a) {
        int n = Integer.parseInt(a[0]);
        P[] ring = new P[1024];
        long s = 0;
        double last = 0;
        for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                ring[i & 1023] = new P(i);
            }
            last = (System.nanoTime() - t0) / (double) n;
            for (P p : ring) s += p.x;
        }
        System.out.printf("%.1f ns per object (checksum %d)%n", last, s);
    }
}
