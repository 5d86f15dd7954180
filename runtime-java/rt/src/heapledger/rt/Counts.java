package heapledger.rt;

/**
 * An open-addressing table of allocation counts keyed by (account, site, part). One instance
 * belongs to one thread, which is the only writer, so counting needs no lock and loses no
 * update. Snapshot readers take the array reference once and read a consistent-enough view:
 * the table is a single array, so a reader never pairs keys of one generation with values of
 * another.
 */
final class Counts {
    /** Slot layout: key+1 (0 = empty), count, elements, bytes. */
    static final int STRIDE = 4;

    long[] table = new long[STRIDE * 64];
    int size;

    static long key(int account, int site, int part) {
        return ((long) account << 32) | ((long) site << 1 & 0xFFFFFFFFL) | part;
    }

    static int account(long key) { return (int) (key >>> 32); }
    static int site(long key) { return (int) ((key & 0xFFFFFFFFL) >>> 1); }
    static int part(long key) { return (int) (key & 1); }

    /** Returns the slot index for key, inserting it if absent. */
    int slot(long key) {
        long[] t = table;
        int mask = t.length / STRIDE - 1;
        long stored = key + 1;
        int i = mix(key) & mask;
        while (true) {
            int s = i * STRIDE;
            long k = t[s];
            if (k == stored) return s;
            if (k == 0) {
                if ((size + 1) * 4 > (mask + 1) * 3) {
                    grow();
                    return slot(key);
                }
                t[s] = stored;
                size++;
                return s;
            }
            i = (i + 1) & mask;
        }
    }

    /** Adds to the key's totals and returns its new count (liveness sampling uses it). */
    long add(long key, long count, long elements, long bytes) {
        int s = slot(key);
        long[] t = table;
        t[s + 2] += elements;
        t[s + 3] += bytes;
        return t[s + 1] += count;
    }

    /** Returns the slot of key if present, -1 otherwise; never inserts. */
    int find(long key) {
        long[] t = table;
        int mask = t.length / STRIDE - 1;
        long stored = key + 1;
        for (int i = mix(key) & mask; ; i = (i + 1) & mask) {
            long k = t[i * STRIDE];
            if (k == stored) return i * STRIDE;
            if (k == 0) return -1;
        }
    }

    /** Adds every entry of other into this table (used to merge threads at snapshot time). */
    void addAll(Counts other) {
        long[] t = other.table;
        for (int s = 0; s < t.length; s += STRIDE) {
            if (t[s] != 0) add(t[s] - 1, t[s + 1], t[s + 2], t[s + 3]);
        }
    }

    private void grow() {
        long[] old = table;
        long[] t = new long[old.length * 2];
        int mask = t.length / STRIDE - 1;
        for (int s = 0; s < old.length; s += STRIDE) {
            if (old[s] == 0) continue;
            int i = mix(old[s] - 1) & mask;
            while (t[i * STRIDE] != 0) i = (i + 1) & mask;
            System.arraycopy(old, s, t, i * STRIDE, STRIDE);
        }
        table = t; // publish last: readers see either the old or the new table, both complete
    }

    private static int mix(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 29));
    }
}
