package heapledger.rt;

import java.io.File;
import java.util.HashMap;
import java.util.Map;

/**
 * Account budgets, the "self-policing" the accounting paper's conclusion proposes: when an
 * account's live bytes pass its budget, the runtime says so once, can write a heap dump, and,
 * when asked, throws OutOfMemoryError at that account's next allocation in rewritten code.
 *
 * <p>Budgets are set at rewrite time (config "budget.NAME" = bytes, "budget.action" = log, dump,
 * throw or dump+throw) or at launch (heapledger.budget.NAME, heapledger.budget.action). They
 * need liveness: live bytes are allocated bytes less refunds. A daemon thread checks every
 * heapledger.budget.interval milliseconds (default 200), so an account can overshoot by what it
 * allocates in one interval; the check never runs on the allocation path.
 */
final class Budget {
    /** Accounts over budget whose allocations must throw; read on the allocation path. */
    static volatile boolean[] throwing = new boolean[0];
    static volatile boolean anyThrowing;

    /**
     * Whether the budget action includes throw, fixed at start-up. The counting fast paths test
     * it before anyThrowing: as a static final it is a constant to the JIT, so without the throw
     * action (the usual case) the volatile read, and the barrier it puts between the loads of
     * every site, disappear from compiled code. Snapshots.start initialises this class first
     * thing, before any counting and before the runtime starts a thread of its own.
     */
    static final boolean MAY_THROW = mayThrow();

    /** Does nothing; calling it initialises this class (Snapshots.start, at runtime start-up). */
    static void init() {}

    private static boolean mayThrow() {
        try {
            return action().contains("throw");
        } catch (Throwable e) {
            return true; // unsure: keep the check
        }
    }

    /** The budget action: log, dump, throw or dump+throw (rewrite-time config, overridden at launch). */
    private static String action() {
        return Snapshots.setting("heapledger.budget.action", "HEAPLEDGER_BUDGET_ACTION", Config.get("budget.action", "log"));
    }

    private static final Map<Integer, Long> LIMITS = new HashMap<Integer, Long>();
    private static final Map<Integer, String> NAMES = new HashMap<Integer, String>();
    private static boolean dump, raise;
    private static final java.util.Set<Integer> REPORTED = new java.util.HashSet<Integer>();

    /** Whether any budget is set, so that start-up reads the tables only when it must. */
    static boolean configured() {
        if (Config.hasPrefix("budget.")) return true;
        try {
            for (Object k : System.getProperties().keySet()) {
                if (String.valueOf(k).startsWith("heapledger.budget.")) return true;
            }
        } catch (SecurityException e) {
            return false;
        }
        return false;
    }

    static volatile boolean active;

    static void start(Snapshots.Tables tables) {
        String action = action();
        dump = action.contains("dump");
        raise = action.contains("throw");
        for (Map.Entry<Integer, String> a : tables.accounts.entrySet()) {
            String name = a.getValue();
            String v = Snapshots.setting("heapledger.budget." + name, "", Config.get("budget." + name, ""));
            if (v.isEmpty()) continue;
            try {
                LIMITS.put(a.getKey(), Long.parseLong(v));
                NAMES.put(a.getKey(), name);
            } catch (NumberFormatException e) {
                Snapshots.warn("budget of " + name + " '" + v + "' is not a number of bytes; ignored");
            }
        }
        if (LIMITS.isEmpty()) return;
        if (Live.MODE == Live.OFF) {
            Snapshots.warn("account budgets need liveness (--liveness all or sample:N); budgets are not enforced");
            return;
        }
        long iv = 200;
        try {
            iv = Long.parseLong(Snapshots.setting("heapledger.budget.interval", "HEAPLEDGER_BUDGET_INTERVAL", "200"));
        } catch (NumberFormatException e) {
            Snapshots.warn("budget interval is not a number of milliseconds; using 200");
        }
        final long interval = Math.max(10, iv);
        active = true;
        Thread t = new Thread("heapledger-budgets") {
            @Override
            public void run() {
                while (true) {
                    try {
                        Thread.sleep(interval);
                        check();
                    } catch (InterruptedException e) {
                        return;
                    } catch (Throwable e) {
                        Ledger.drop(e);
                    }
                }
            }
        };
        t.setDaemon(true);
        t.start();
    }

    /** Live bytes per account, from the merged counts less the refunds (the sweeper's, after each collection). */
    static Map<Integer, Long> liveBytes() {
        Counts c = Ledger.merge();
        Counts reclaimed = new Counts();
        synchronized (Live.RECLAIMED) {
            reclaimed.addAll(Live.RECLAIMED);
        }
        Map<Integer, Long> out = new HashMap<Integer, Long>();
        Map<Integer, Long> sizes = new HashMap<Integer, Long>();
        long[] t = c.table;
        for (int s = 0; s < t.length; s += Counts.STRIDE) {
            if (t[s] == 0) continue;
            long key = t[s] - 1;
            int account = Counts.account(key);
            if (!LIMITS.containsKey(account)) continue;
            long bytes = t[s + 3];
            long gone = 0;
            int r = reclaimed.find(key);
            if (t[s + 2] == 0 && t[s + 3] == 0) { // objects: size of the site's class
                int site = Counts.site(key);
                Long size = sizes.get(site);
                if (size == null) {
                    Class<?> type = SiteClasses.get(site);
                    size = type != null ? Sizes.instance(type) : 0L;
                    sizes.put(site, size);
                }
                bytes = t[s + 1] * size;
                if (r >= 0) gone = reclaimed.table[r + 1] * Live.RATE * size;
            } else if (r >= 0) {
                gone = reclaimed.table[r + 3] * Live.RATE;
            }
            Long prev = out.get(account);
            out.put(account, (prev == null ? 0 : prev) + Math.max(0, bytes - gone));
        }
        return out;
    }

    static synchronized void check() {
        Map<Integer, Long> live = liveBytes();
        for (Map.Entry<Integer, Long> e : live.entrySet()) {
            int account = e.getKey();
            long limit = LIMITS.get(account);
            if (e.getValue() <= limit || REPORTED.contains(account)) continue;
            REPORTED.add(account);
            String name = NAMES.get(account);
            Snapshots.warn("account " + name + " is over its budget: " + e.getValue() + " live bytes > " + limit);
            if (dump) {
                String f = Snapshots.heapDump("budget-" + name.replaceAll("[^A-Za-z0-9_.-]", "_"));
                if (f != null) Snapshots.warn("heap dump written to " + f);
            }
            if (raise) {
                boolean[] th = throwing;
                if (account >= th.length) {
                    boolean[] bigger = new boolean[account + 1];
                    System.arraycopy(th, 0, bigger, 0, th.length);
                    th = bigger;
                }
                th[account] = true;
                throwing = th;
                anyThrowing = true;
            }
        }
    }

    /** Called on the allocation path when anyThrowing is set. */
    static void enforce(int account) {
        boolean[] th = throwing;
        if (account < th.length && th[account]) {
            throw new OutOfMemoryError("heapledger: account " + NAMES.get(account) + " is over its budget of " + LIMITS.get(account) + " bytes");
        }
    }

    static String dumpPath(String dir, String base) {
        return new File(dir, base + ".hprof").getPath();
    }
}
