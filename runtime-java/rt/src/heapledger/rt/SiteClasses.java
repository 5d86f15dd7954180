package heapledger.rt;

/**
 * The class of the first object seen at each object site, for the size model. Site IDs are
 * sparse (each separately rewritten jar numbers its sites from its own base), so this is an
 * open-addressing table, not an array by ID. Readers take no lock: the table is swapped whole
 * when it grows, and its entries are immutable objects, so a reader sees an entry complete or
 * not at all; writers hold the class's lock.
 */
final class SiteClasses {
    private SiteClasses() {}

    private static final class Entry {
        final int site;
        final Class<?> type;

        Entry(int site, Class<?> type) {
            this.site = site;
            this.type = type;
        }
    }

    private static volatile Entry[] table = new Entry[1024];
    private static int size; // under the lock

    /** The class seen at site, or null. */
    static Class<?> get(int site) {
        Entry[] t = table;
        int mask = t.length - 1;
        for (int i = mix(site) & mask; ; i = (i + 1) & mask) {
            Entry e = t[i];
            if (e == null) return null;
            if (e.site == site) return e.type;
        }
    }

    /** Records c as the class of site, unless one is recorded already. */
    static synchronized void put(int site, Class<?> c) {
        if (get(site) != null) return;
        Entry[] t = table;
        if ((size + 1) * 2 > t.length) {
            Entry[] bigger = new Entry[t.length * 2];
            for (Entry e : t) {
                if (e != null) insert(bigger, e);
            }
            t = bigger;
        }
        insert(t, new Entry(site, c));
        size++;
        table = t; // published after the insert: a volatile write
    }

    private static void insert(Entry[] t, Entry e) {
        int mask = t.length - 1;
        int i = mix(e.site) & mask;
        while (t[i] != null) i = (i + 1) & mask;
        t[i] = e;
    }

    private static int mix(int site) {
        return (site * 0x9E3779B9) >>> 7;
    }
}
