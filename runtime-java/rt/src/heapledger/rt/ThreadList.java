package heapledger.rt;

/**
 * A few threads in the middle of something (registering with the runtime or with the
 * Object.<init> hook), readable without a lock or an allocation: a copy-on-write array, almost
 * always empty. Changing it allocates arrays only, which run no constructor, so it is safe to use
 * where every constructed object calls back into the runtime.
 */
final class ThreadList {
    private volatile Thread[] threads = new Thread[0];

    boolean contains(Thread t) {
        Thread[] r = threads;
        for (int i = 0; i < r.length; i++) {
            if (r[i] == t) return true;
        }
        return false;
    }

    synchronized void add(Thread t) {
        Thread[] r = threads;
        Thread[] n = new Thread[r.length + 1];
        System.arraycopy(r, 0, n, 0, r.length);
        n[r.length] = t;
        threads = n;
    }

    synchronized void remove(Thread t) {
        Thread[] r = threads;
        int k = 0;
        Thread[] n = new Thread[Math.max(0, r.length - 1)];
        for (Thread x : r) {
            if (x != t && k < n.length) n[k++] = x;
        }
        threads = n;
    }
}
