package heapledger.rt;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URL;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;

/**
 * Writes snapshots: at exit (shutdown hook), every N seconds when asked, and on demand.
 *
 * <p>Settings, each a system property or else an environment variable:
 * heapledger.snapshot.dir / HEAPLEDGER_SNAPSHOT_DIR (default: the working directory),
 * heapledger.snapshot.interval / HEAPLEDGER_SNAPSHOT_INTERVAL (seconds, default 0 = only at exit),
 * heapledger.snapshot.format / HEAPLEDGER_SNAPSHOT_FORMAT (text, json or both; default text),
 * heapledger.table / HEAPLEDGER_TABLE (extra table files, path-separator separated; tables
 * named META-INF/heapledger/table.tsv on the class path are always read).
 *
 * <p>File names say which program and process wrote them:
 * heapledger-PROGRAM-PID-SEQ.snapshot (and .json), SEQ counting from 1 within the process.
 */
final class Snapshots {
    static final String TABLE_RESOURCE = "META-INF/heapledger/table.tsv";

    private static String dir;
    private static String format;
    private static long intervalMillis;
    private static int seq;
    /** The shutdown hook that writes the exit snapshot; null until start() registers it. */
    private static volatile Thread exitHook;
    /** For the JMX attributes: what was written, and why the last write failed. */
    private static long snapshotsWritten;
    private static String lastWritten = "";
    private static String lastError = "";
    private static final long START = System.currentTimeMillis();

    static void start() {
        // Budget first, while the runtime has no thread of its own: its MAY_THROW reads
        // settings, and the counting paths read it only once Ledger (whose initialisation calls
        // this) is initialised, so no program thread ever initialises Budget mid-count.
        Budget.init();
        Context.init(); // as Budget: Context.ON is read on the counting paths
        dir = setting("heapledger.snapshot.dir", "HEAPLEDGER_SNAPSHOT_DIR", ".");
        format = setting("heapledger.snapshot.format", "HEAPLEDGER_SNAPSHOT_FORMAT", "text");
        if (!format.equals("text") && !format.equals("json") && !format.equals("both")) {
            warn("unknown snapshot format '" + format + "', using text");
            format = "text";
        }
        String iv = setting("heapledger.snapshot.interval", "HEAPLEDGER_SNAPSHOT_INTERVAL", Config.get("snapshot.interval", "0"));
        try {
            intervalMillis = (long) (Double.parseDouble(iv) * 1000);
        } catch (NumberFormatException e) {
            warn("snapshot interval '" + iv + "' is not a number of seconds; snapshots only at exit");
        }
        try {
            Thread hook = new Thread("heapledger-exit-snapshot") {
                @Override
                public void run() {
                    write("exit");
                }
            };
            Runtime.getRuntime().addShutdownHook(hook);
            exitHook = hook;
        } catch (Throwable e) {
            warn("cannot register the exit snapshot: " + e);
        }
        installSignal();
        try {
            LedgerControl.start();
        } catch (Throwable e) {
            warn("the JMX operations (" + LedgerControlMBean.NAME + ") are not available: " + e);
        }
        try {
            if (Budget.configured()) Budget.start(Tables.load(new int[0]));
        } catch (Throwable e) {
            warn("cannot start account budgets: " + e);
        }
        if (intervalMillis > 0) {
            Thread t = new Thread("heapledger-snapshots") {
                @Override
                public void run() {
                    while (true) {
                        try {
                            Thread.sleep(intervalMillis);
                        } catch (InterruptedException e) {
                            return;
                        }
                        write("interval");
                    }
                }
            };
            t.setDaemon(true);
            t.start();
        }
    }

    /**
     * Waits for the exit snapshot's shutdown hook to end, at most millis. Only for another
     * shutdown hook (the agent's), which must not end its transform service while the snapshot
     * may still load classes: a hook not started yet is waited for, as the JVM is exiting.
     * Returns at once when the runtime registered no such hook.
     */
    static void awaitExit(long millis) throws InterruptedException {
        Thread hook = exitHook;
        if (hook == null || hook == Thread.currentThread()) return;
        long deadline = System.nanoTime() + millis * 1000000L;
        // The JVM starts its hooks one after another: this one may run before the snapshot's
        // has been started, and join returns at once on a thread not yet started.
        while (hook.getState() == Thread.State.NEW && System.nanoTime() < deadline) Thread.sleep(1);
        long left = (deadline - System.nanoTime()) / 1000000L;
        if (left > 0) hook.join(left);
    }

    /** heapledger.snapshot.gc / HEAPLEDGER_SNAPSHOT_GC: a full GC before each snapshot, the exit's too. */
    static boolean gcBefore() {
        return Boolean.parseBoolean(setting("heapledger.snapshot.gc", "HEAPLEDGER_SNAPSHOT_GC", Config.get("snapshot.gc", "false")));
    }

    /**
     * `kill -USR1 PID` writes a snapshot on demand. sun.misc.Signal is reached reflectively (it
     * is not part of the Java 8 API the runtime is compiled against), and the handler is a
     * proxy so no class of ours implements an internal interface. HotSpot keeps SIGUSR2 for
     * itself, and QUIT prints thread dumps, so USR1 is the one to use.
     */
    private static void installSignal() {
        String sig = setting("heapledger.snapshot.signal", "HEAPLEDGER_SNAPSHOT_SIGNAL", "USR1");
        if (sig.equals("none")) return;
        try {
            final Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object handler = java.lang.reflect.Proxy.newProxyInstance(handlerClass.getClassLoader(), new Class<?>[] {handlerClass},
                    new java.lang.reflect.InvocationHandler() {
                        @Override
                        public Object invoke(Object proxy, java.lang.reflect.Method m, Object[] args) {
                            if (m.getName().equals("handle")) {
                                Thread t = new Thread("heapledger-demand-snapshot") {
                                    @Override
                                    public void run() {
                                        String f = write("demand");
                                        if (f != null) warn("snapshot written to " + f);
                                    }
                                };
                                t.setDaemon(true);
                                t.start();
                                return null;
                            }
                            if (m.getName().equals("hashCode")) return System.identityHashCode(proxy);
                            if (m.getName().equals("equals")) return proxy == args[0];
                            return "heapledger snapshot handler";
                        }
                    });
            Object signal = signalClass.getConstructor(String.class).newInstance(sig);
            signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, handler);
        } catch (Throwable e) {
            Throwable c = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
            warn("snapshots on signal " + sig + " are not available: " + c);
        }
    }

    /**
     * Writes a heap dump of live objects (HotSpotDiagnosticMXBean, reached reflectively so the
     * runtime has no compile-time dependency on com.sun.management) into the snapshot directory.
     */
    static String heapDump(String what) {
        String path = dumpPath(what);
        try {
            new File(path).delete();
            return dumpHeap(path);
        } catch (Throwable e) {
            warn(e.getMessage());
            return null;
        }
    }

    /** The default heap dump file in the snapshot directory, named like the snapshots. */
    static String dumpPath(String what) {
        return Budget.dumpPath(dir, "heapledger-" + program() + "-" + pid() + "-" + what);
    }

    /**
     * The table (docs/formats.md: the accounts, and the sites that counted) as UTF-8 while the
     * runtime writes a heap dump, and null otherwise: the dump then holds the names of the
     * accounts and sites its tracking references carry, which `heapledger heap analyze` reads.
     * Made just before each dump and dropped after it, so no table text stays in memory between
     * dumps. A dump taken by jmap or jcmd finds it null.
     */
    static volatile byte[] heapDumpTable;

    /** One dump at a time: each holds its own table. */
    private static final Object DUMP_LOCK = new Object();

    /**
     * Dumps live objects to path, creating its directory, with the table in heapDumpTable.
     * HotSpot refuses an existing file (and, from JDK 11, a name without .hprof); the exception
     * says so and names the path.
     */
    static String dumpHeap(String path) {
        synchronized (DUMP_LOCK) {
            try {
                File parent = new File(path).getAbsoluteFile().getParentFile();
                if (parent != null && !parent.isDirectory() && !parent.mkdirs()) {
                    throw new IOException("cannot create directory " + parent);
                }
                Class<?> bean = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
                Object mx = java.lang.management.ManagementFactory.class.getMethod("getPlatformMXBean", Class.class)
                        .invoke(null, bean);
                heapDumpTable = tableBytes();
                bean.getMethod("dumpHeap", String.class, boolean.class).invoke(mx, path, true);
                return path;
            } catch (Throwable e) {
                Throwable c = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
                throw new IllegalStateException("cannot write a heap dump to " + path + ": " + c);
            } finally {
                heapDumpTable = null;
            }
        }
    }

    /**
     * The accounts and the sites that counted, in the table format (version line, account lines
     * counting up from 0, site lines of five fields), as UTF-8; null when the tables cannot be
     * read (the dump is then written without names, and the failure counted as dropped).
     */
    static byte[] tableBytes() {
        try {
            Tables t = Tables.load(sitesOf(Ledger.merge()));
            StringBuilder b = new StringBuilder("# heapledger table 1\n");
            int last = 0;
            for (Integer a : t.accounts.keySet()) last = Math.max(last, a);
            for (int a = 0; a <= last; a++) {
                String name = t.accounts.get(a);
                if (name == null) name = a == 0 ? "<unaccounted>" : "account-" + a;
                b.append("account\t").append(a).append('\t').append(name).append('\n');
            }
            Integer[] ids = t.sites.keySet().toArray(new Integer[0]);
            java.util.Arrays.sort(ids);
            for (Integer id : ids) {
                String[] f = t.sites.get(id);
                b.append("site\t").append(id);
                for (int i = 0; i < 5; i++) b.append('\t').append(siteField(f, i));
                b.append('\n');
            }
            return b.toString().getBytes("UTF-8");
        } catch (Throwable e) {
            Ledger.drop(e);
            return null;
        }
    }

    /** Field i of a site's KIND TYPE METHOD OFFSET LINE, whatever its table gave: OFFSET and LINE numbers, -1 when missing. */
    private static String siteField(String[] f, int i) {
        String v = i < f.length ? f[i] : "";
        if (i < 3) return v;
        try {
            return String.valueOf(Integer.parseInt(v));
        } catch (NumberFormatException e) {
            return "-1";
        }
    }

    static String dir() {
        return dir;
    }

    static String format() {
        return format;
    }

    static double intervalSeconds() {
        return intervalMillis / 1000.0;
    }

    static synchronized long written() {
        return snapshotsWritten;
    }

    static synchronized String lastWritten() {
        return lastWritten;
    }

    static synchronized String lastError() {
        return lastError;
    }

    static String setting(String prop, String env, String def) {
        String v = null;
        try {
            v = System.getProperty(prop);
            if ((v == null || v.isEmpty()) && !env.isEmpty()) v = System.getenv(env);
        } catch (SecurityException e) {
            v = null;
        }
        return v == null || v.isEmpty() ? def : v;
    }

    static void warn(String msg) {
        System.err.println("heapledger: " + msg);
    }

    static synchronized String write(String reason) {
        int n = ++seq;
        String base = "heapledger-" + program() + "-" + pid() + "-" + n;
        String written = null;
        try {
            // With snapshot.gc every snapshot, the one at exit too, has its full GC, so that
            // `heapledger leaks` compares like with like.
            int gcMark = Live.MODE != Live.OFF && gcBefore() ? Live.fullGC() : -1;
            if (Budget.active) Budget.check(); // snapshots are also budget checkpoints
            // The live view first, the counts after: every object is counted before it is
            // tracked, so counts merged later include every object the view saw, and no row
            // shows more live (+ reclaimed + untracked) objects than it counted, however busy
            // the program is. Both files of format "both" share the one view.
            SnapshotFormat.LiveView lv = SnapshotFormat.LiveView.take(gcMark);
            ContextTree tree = Context.ON ? new ContextTree() : null;
            Counts c = Ledger.merge(tree);
            java.util.ArrayList<Context> nodes = tree == null ? null : tree.preorder();
            Tables t = Tables.load(sitesOf(c, nodes));
            EdgeProfile ep = EdgeProfile.of(c, t);
            PathCounts pc = new PathCounts();
            Counts sites = pc.expand(c, t);
            if (sites != c) {
                c = sites;
                t = Tables.load(sitesOf(c, nodes));
                pc.noteClasses(t);
            }
            if (lv != null) lv.unseen = pc.unseen;
            pathLines = pc.lines(countIncrements());
            switchLines = countIncrements() ? Switches.lines(Ledger.switches()) : new String[0][];
            t.tell();
            Map<Integer, Long> sizes = objectSizes(c);
            SnapshotFormat.Contexts cx = tree == null ? null : new SnapshotFormat.Contexts(tree, nodes);
            if (!format.equals("json")) written = writeFile(new File(dir, base + ".snapshot"), c, lv, cx, ep, t, sizes, reason, false);
            if (reason.equals("demand") && Boolean.parseBoolean(setting("heapledger.snapshot.heapdump", "HEAPLEDGER_SNAPSHOT_HEAPDUMP", "false"))) {
                String h = heapDump(String.valueOf(n));
                if (h != null) warn("heap dump written to " + h);
            }
            if (!format.equals("text")) {
                String j = writeFile(new File(dir, base + ".json"), c, lv, cx, ep, t, sizes, reason, true);
                if (written == null) written = j;
            }
            snapshotsWritten++;
            lastWritten = written;
        } catch (Throwable e) {
            lastError = "could not write snapshot " + base + " to " + dir + ": " + e;
            warn(lastError);
        }
        return written;
    }

    private static String writeFile(File f, Counts c, SnapshotFormat.LiveView lv, SnapshotFormat.Contexts cx, EdgeProfile ep,
            Tables t, Map<Integer, Long> sizes, String reason, boolean json) throws IOException {
        File parent = f.getAbsoluteFile().getParentFile();
        if (parent != null && !parent.isDirectory() && !parent.mkdirs()) {
            throw new IOException("cannot create directory " + parent);
        }
        File tmp = new File(f.getPath() + ".tmp");
        Writer w = new OutputStreamWriter(new FileOutputStream(tmp), "UTF-8");
        try {
            if (json) SnapshotFormat.json(w, c, lv, cx, ep, t, sizes, reason, header(t, lv, cx));
            else SnapshotFormat.text(w, c, lv, cx, ep, t, sizes, reason, header(t, lv, cx));
        } finally {
            w.close();
        }
        if (!tmp.renameTo(f)) {
            f.delete();
            if (!tmp.renameTo(f)) throw new IOException("cannot rename " + tmp + " to " + f);
        }
        return f.getPath();
    }

    /** The path counters' header lines of the snapshot being written (write() holds the lock). */
    private static String[][] pathLines = new String[0][];

    /** The account switches' header lines of the snapshot being written (write() holds the lock). */
    private static String[][] switchLines = new String[0][];

    /** Whether snapshots say how many counter increments ran (--count-increments). */
    static boolean countIncrements() {
        return Boolean.parseBoolean(setting("heapledger.increments", "HEAPLEDGER_INCREMENTS", Config.get("increments", "false")));
    }

    /** The header, with the liveness view's lines and, when tables clash, a line saying so. */
    static String[][] header(Tables t, SnapshotFormat.LiveView lv, SnapshotFormat.Contexts cx) {
        java.util.List<String[]> h = new java.util.ArrayList<String[]>(java.util.Arrays.asList(header()));
        if (lv != null) h.addAll(java.util.Arrays.asList(lv.header()));
        h.addAll(java.util.Arrays.asList(pathLines));
        h.addAll(java.util.Arrays.asList(switchLines));
        synchronized (Ledger.AGENT_HEADER) {
            for (Map.Entry<String, String> e : Ledger.AGENT_HEADER.entrySet()) h.add(new String[] {e.getKey(), e.getValue()});
        }
        if (cx != null) h.add(new String[] {"context", cx.tree.describe()});
        if (t.clashes() > 0) h.add(new String[] {"clashes", t.clashes() + " IDs named differently by the tables of " + t.clash});
        return h.toArray(new String[0][]);
    }

    static String[][] header() {
        String[][] h = new String[][] {
            {"program", program()},
            {"pid", String.valueOf(pid())},
            {"time", isoUTC(System.currentTimeMillis())},
            {"uptime_ms", String.valueOf(System.currentTimeMillis() - START)},
            {"threads", String.valueOf(Ledger.liveThreads())},
            {"dropped", String.valueOf(Ledger.DROPPED.get())},
            {"liveness", Live.describe()},
            {"size_model", "header=" + Sizes.OBJECT_HEADER + " ref=" + Sizes.REF + " array_base=" + Sizes.ARRAY_BASE
                    + " align=" + Sizes.ALIGN + " from=" + Sizes.SOURCE},
        };
        // The count stays a number; what the first failure was goes on a line of its own.
        String first = Ledger.firstDrop;
        if (first == null) return h;
        String[][] more = java.util.Arrays.copyOf(h, h.length + 1);
        more[h.length] = new String[] {"dropped_first", first};
        return more;
    }

    /**
     * The sites that have counts, sorted: the only ones whose names a snapshot needs. Not a
     * BitSet: site IDs lie anywhere below 2^31 (docs/formats.md, "Site IDs"), and a BitSet up to
     * the highest took a hundred megabytes at the exit of every program.
     */
    static int[] sitesOf(Counts c) {
        return sitesOf(c, null);
    }

    /** As {@link #sitesOf(Counts)}, and the methods of a calling-context tree's nodes (null for none). */
    static int[] sitesOf(Counts c, java.util.ArrayList<Context> nodes) {
        java.util.Set<Integer> methods = new java.util.HashSet<Integer>();
        if (nodes != null) ContextTree.methodsOf(nodes, methods);
        long[] tab = c.table;
        int[] s = new int[c.size + methods.size()];
        int n = 0;
        for (int i = 0; i < tab.length; i += Counts.STRIDE) {
            if (tab[i] != 0 && n < s.length) s[n++] = Counts.site(tab[i] - 1);
        }
        for (int m : methods) if (n < s.length) s[n++] = m;
        s = java.util.Arrays.copyOf(s, n);
        java.util.Arrays.sort(s);
        return s;
    }

    /** Shallow size of the class seen at each object site that has counts; -1 when unknown. */
    private static Map<Integer, Long> objectSizes(Counts c) {
        Map<Integer, Long> sizes = new HashMap<Integer, Long>();
        long[] tab = c.table;
        for (int s = 0; s < tab.length; s += Counts.STRIDE) {
            if (tab[s] == 0) continue;
            long key = tab[s] - 1;
            int site = Counts.site(key);
            if (sizes.containsKey(site)) continue;
            long size = -1;
            Class<?> type = SiteClasses.get(site);
            if (type != null && !type.isArray()) {
                try {
                    size = Sizes.instance(type);
                } catch (Throwable e) {
                    size = -1;
                }
            }
            sizes.put(site, size);
        }
        return sizes;
    }

    /**
     * millis as yyyy-MM-ddTHH:mm:ss.SSSZ in UTC. Written out rather than with SimpleDateFormat:
     * that loads the locale providers and calendar data, 25 ms of a run's exit and more classes
     * than the rest of the snapshot; the proleptic Gregorian arithmetic is a few lines
     * (days to civil date after Howard Hinnant's algorithm).
     */
    static String isoUTC(long millis) {
        long days = Math.floorDiv(millis, 86400000L);
        long ms = millis - days * 86400000L;
        long z = days + 719468;
        long era = Math.floorDiv(z, 146097);
        long doe = z - era * 146097;
        long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        long mp = (5 * doy + 2) / 153;
        long d = doy - (153 * mp + 2) / 5 + 1;
        long m = mp < 10 ? mp + 3 : mp - 9;
        long y = yoe + era * 400 + (m <= 2 ? 1 : 0);
        StringBuilder b = new StringBuilder(24);
        pad(b, y, 4).append('-');
        pad(b, m, 2).append('-');
        pad(b, d, 2).append('T');
        pad(b, ms / 3600000, 2).append(':');
        pad(b, ms / 60000 % 60, 2).append(':');
        pad(b, ms / 1000 % 60, 2).append('.');
        return pad(b, ms % 1000, 3).append('Z').toString();
    }

    private static StringBuilder pad(StringBuilder b, long v, int width) {
        String s = Long.toString(v);
        for (int i = s.length(); i < width; i++) b.append('0');
        return b.append(s);
    }

    private static String program;

    static String program() {
        if (program != null) return program;
        String cmd = null;
        try {
            cmd = System.getProperty("sun.java.command");
        } catch (SecurityException e) {
            cmd = null;
        }
        String p = "java";
        if (cmd != null && !cmd.trim().isEmpty()) {
            // The main class or jar is the first word; no regex, which would load java.util.regex at exit.
            p = cmd.trim();
            for (int i = 0; i < p.length(); i++) {
                if (Character.isWhitespace(p.charAt(i))) {
                    p = p.substring(0, i);
                    break;
                }
            }
            int slash = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
            if (slash >= 0) p = p.substring(slash + 1);
            if (p.endsWith(".jar")) p = p.substring(0, p.length() - 4);
            else if (p.indexOf('.') >= 0) p = p.substring(p.lastIndexOf('.') + 1); // simple class name
        }
        StringBuilder sb = new StringBuilder();
        for (char ch : p.toCharArray()) sb.append(Character.isLetterOrDigit(ch) || ch == '-' || ch == '_' ? ch : '_');
        program = sb.length() == 0 ? "java" : sb.toString();
        return program;
    }

    private static long pid = -1;

    static long pid() {
        if (pid >= 0) return pid;
        try {
            // Linux: /proc/self names the process. Cheaper than ProcessHandle, whose class
            // initialisation starts the JDK's process-reaper thread pool.
            File self = new File("/proc/self").getCanonicalFile();
            pid = Long.parseLong(self.getName());
            return pid;
        } catch (Throwable e) {
            // not Linux: below
        }
        try {
            // Java 9+: ProcessHandle, reached reflectively because the runtime targets Java 8.
            Class<?> ph = Class.forName("java.lang.ProcessHandle");
            Object cur = ph.getMethod("current").invoke(null);
            pid = (Long) ph.getMethod("pid").invoke(cur);
        } catch (Throwable e) {
            try {
                String n = java.lang.management.ManagementFactory.getRuntimeMXBean().getName();
                pid = Long.parseLong(n.substring(0, n.indexOf('@')));
            } catch (Throwable e2) {
                pid = 0;
            }
        }
        return pid;
    }

    /**
     * Account and site names from the tables the rewriter wrote. Jars rewritten apart each have
     * a table, and their site IDs come from ranges chosen apart (docs/formats.md, "Site IDs"): an
     * ID two tables give different sites or accounts is a clash, whose counts cannot be told
     * apart. It is named by both, as ambiguous, never by one of them, and said loudly.
     */
    static final class Tables {
        final Map<Integer, String> accounts = new HashMap<Integer, String>();
        final Map<Integer, String[]> sites = new HashMap<Integer, String[]>();
        final StringBuilder sources = new StringBuilder();
        /** The table each name came from, and the IDs found clashing. */
        private final Map<Integer, String> accountFrom = new HashMap<Integer, String>(), siteFrom = new HashMap<Integer, String>();
        private final java.util.Set<Integer> clashedAccounts = new java.util.HashSet<Integer>(), clashedSites = new java.util.HashSet<Integer>();
        /** The tables of the first clash, for the message. */
        String clash;
        private static boolean told;

        /** The tables on the class path, the agent's and heapledger.table's; of the sites, only those in wanted (sorted). */
        static Tables load(int[] wanted) {
            Tables t = new Tables();
            try {
                ClassLoader cl = ClassLoader.getSystemClassLoader();
                Enumeration<URL> e = cl == null ? null : cl.getResources(TABLE_RESOURCE);
                while (e != null && e.hasMoreElements()) {
                    URL u = e.nextElement();
                    InputStream in = u.openStream();
                    try {
                        t.read(in, u.toString(), wanted);
                    } finally {
                        in.close();
                    }
                }
            } catch (Throwable e) {
                warn("cannot read table resources: " + e);
            }
            String defined = Ledger.definedTable();
            if (!defined.isEmpty()) {
                try {
                    t.read(new java.io.ByteArrayInputStream(defined.getBytes("UTF-8")), "heapledger agent", wanted);
                } catch (Throwable e) {
                    warn("cannot read the agent's table: " + e);
                }
            }
            String extra = setting("heapledger.table", "HEAPLEDGER_TABLE", "");
            if (!extra.isEmpty()) {
                for (String p : extra.split(File.pathSeparator)) {
                    if (p.isEmpty()) continue;
                    try {
                        InputStream in = new java.io.FileInputStream(p);
                        try {
                            t.read(in, p, wanted);
                        } finally {
                            in.close();
                        }
                    } catch (Throwable e) {
                        warn("cannot read table " + p + ": " + e);
                    }
                }
            }
            return t;
        }

        /**
         * Reads one table. A rewritten jar's table names every site it has (fop's: 64,000 lines,
         * 9 MB), and a snapshot needs the few thousand that counted something: lines are cut
         * from the bytes, and a site line whose id is not wanted is dropped before it is
         * decoded or split, which made writing the exit snapshot of such a program several
         * times cheaper.
         */
        void read(InputStream in, String source, int[] wanted) throws IOException {
            if (sources.length() > 0) sources.append(' ');
            sources.append(source);
            byte[] buf = new byte[1 << 16];
            int start = 0, end = 0, scanned = 0;
            boolean eof = false;
            while (true) {
                int nl = -1;
                for (int i = scanned; i < end; i++) {
                    if (buf[i] == '\n') {
                        nl = i;
                        break;
                    }
                }
                if (nl < 0) {
                    if (eof) {
                        if (start < end) line(buf, start, end, source, wanted);
                        return;
                    }
                    if (start > 0) {
                        System.arraycopy(buf, start, buf, 0, end - start);
                        end -= start;
                        start = 0;
                    }
                    if (end == buf.length) buf = java.util.Arrays.copyOf(buf, buf.length * 2);
                    scanned = end;
                    int n = in.read(buf, end, buf.length - end);
                    if (n < 0) eof = true;
                    else end += n;
                    continue;
                }
                line(buf, start, nl, source, wanted);
                start = scanned = nl + 1;
            }
        }

        private static final byte[] SITE = {'s', 'i', 't', 'e', '\t'};

        private void line(byte[] b, int from, int to, String source, int[] wanted) {
            if (to > from && b[to - 1] == '\r') to--;
            if (to == from || b[from] == '#') return;
            if (to - from > SITE.length && b[from] == 's' && b[from + 1] == 'i' && b[from + 2] == 't' && b[from + 3] == 'e' && b[from + 4] == '\t') {
                long id = 0;
                int i = from + SITE.length;
                while (i < to && b[i] >= '0' && b[i] <= '9' && id <= Integer.MAX_VALUE) id = id * 10 + (b[i++] - '0');
                if (i > from + SITE.length && i < to && b[i] == '\t' && id <= Integer.MAX_VALUE
                        && java.util.Arrays.binarySearch(wanted, (int) id) < 0) return;
            }
            String line = new String(b, from, to - from, java.nio.charset.StandardCharsets.UTF_8);
            String[] f = line.split("\t", -1);
            try {
                if (f[0].equals("account") && f.length >= 3) {
                    putAccount(Integer.valueOf(f[1]), f[2], source);
                } else if (f[0].equals("site") && f.length >= 3) {
                    String[] rest = new String[f.length - 2];
                    System.arraycopy(f, 2, rest, 0, rest.length);
                    putSite(Integer.valueOf(f[1]), rest, source);
                }
            } catch (NumberFormatException e) {
                warn(source + ": bad table line: " + line);
            }
        }

        /** Names account id as source does; a later line of the same source wins. */
        private void putAccount(Integer id, String name, String source) {
            String had = accounts.get(id), from = accountFrom.get(id);
            if (had == null || from.equals(source)) {
                if (!clashedAccounts.contains(id)) {
                    accounts.put(id, name);
                    accountFrom.put(id, source);
                }
            } else if (!had.equals(name) && clashedAccounts.add(id)) {
                accounts.put(id, "<ambiguous: " + had + " in " + where(from) + " | " + name + " in " + where(source) + ">");
                clashed(from, source);
            }
        }

        /** Names site id as source does (KIND TYPE METHOD OFFSET LINE); a later line of the same source wins. */
        private void putSite(Integer id, String[] site, String source) {
            String[] had = sites.get(id);
            String from = siteFrom.get(id);
            if (had == null || from.equals(source)) {
                if (!clashedSites.contains(id)) {
                    sites.put(id, site);
                    siteFrom.put(id, source);
                }
            } else if (!java.util.Arrays.equals(had, site) && clashedSites.add(id)) {
                // What both say stays (the kind and type when they agree); the rest names both.
                String kind = field(had, 0).equals(field(site, 0)) ? field(had, 0) : "ambiguous";
                String type = field(had, 1).equals(field(site, 1)) ? field(had, 1) : "?";
                String method = "<ambiguous: " + describe(had) + " in " + where(from) + " | " + describe(site) + " in " + where(source) + ">";
                sites.put(id, new String[] {kind, type, method, "-1", "-1"});
                clashed(from, source);
            }
        }

        private void clashed(String a, String b) {
            if (clash == null) clash = where(a) + " and " + where(b);
        }

        /** IDs named differently by two tables, among those read; 0 when none clash. */
        int clashes() {
            return clashedAccounts.size() + clashedSites.size();
        }

        /** Says once per run that tables clash: the figures are right, some names are not known. */
        void tell() {
            if (clash == null || told) return;
            told = true;
            warn("the tables of " + clash + " give the same IDs to different sites or accounts (they were rewritten apart and their"
                    + " IDs met): their counts cannot be told apart, and the snapshot names them <ambiguous: ...>. Rewrite one of the"
                    + " jars again with --table naming the other's table (docs/formats.md, \"Site IDs\")");
        }

        private static String field(String[] f, int i) {
            return i < f.length ? f[i] : "";
        }

        private static String describe(String[] site) {
            return field(site, 0) + " " + field(site, 1) + " in " + field(site, 2) + " @" + field(site, 3);
        }

        /** A table's source as a user knows it: the jar or directory, not the resource's URL. */
        static String where(String source) {
            String s = source;
            int bang = s.indexOf("!/");
            if (bang >= 0) s = s.substring(0, bang);
            else if (s.endsWith("/" + TABLE_RESOURCE)) s = s.substring(0, s.length() - TABLE_RESOURCE.length() - 1);
            if (s.startsWith("jar:")) s = s.substring(4);
            if (s.startsWith("file:")) s = s.substring(5);
            return s;
        }
    }
}
