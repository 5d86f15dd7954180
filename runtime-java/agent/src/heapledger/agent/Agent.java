package heapledger.agent;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import heapledger.rt.Acct;
import heapledger.rt.Ledger;
import heapledger.rt.ObjectHook;
import heapledger.rt.SelfCounted;

/**
 * The heapledger Java agent: started with -javaagent (premain) or attached to a running JVM
 * (agentmain). It starts `heapledger serve`, installs a transformer that sends classes to it,
 * and passes the site names that come back to the runtime, so snapshots name every site
 * without a table file. docs/agent.md describes the options and every failure mode.
 *
 * <p>The agent and the runtime are on the bootstrap class path (Boot-Class-Path), so classes of
 * every loader reach heapledger.rt, and loading them never waits on an application loader.
 * Everything the transformer needs is loaded before it is installed.
 */
public final class Agent {
    /** Per thread: inside the transformer already, or one of the agent's own threads. */
    static final ThreadLocal<boolean[]> BUSY = new ThreadLocal<boolean[]>() {
        @Override
        protected boolean[] initialValue() {
            return new boolean[1];
        }
    };

    private static Agent active;
    /** An agent ran in this JVM before (attach, detach, attach again). */
    private static boolean startedBefore;

    private final Options options;
    private final Instrumentation inst;
    private final Service service;
    private final Transformer transformer;
    private final long started = System.nanoTime();
    /** How long the exit waits for the snapshot before ending the service (the JVM waits for it anyway). */
    private static final long SNAPSHOT_WAIT_MILLIS = 60000;
    /** How long the exit waits for the service to answer what is in flight and end its output. */
    private static final long SERVICE_END_MILLIS = 1000;
    private final long serviceStartNanos;
    /** --adapt: re-instruments classes from their edge counts; null when off. */
    private final Adapt adapt;
    /** Cached classes answered without the service; null when the service offered none. */
    private final LocalCache local;
    /** The loader whose class path the service reads as its input (classPathArgs), or null. */
    private final ClassLoader classPathLoader;

    // Statistics, under `this`.
    private long[] latencies = new long[1024];
    private int sent, changed, unchanged, failed, skippedMethods, cached;
    private String firstFailure;
    private int failuresShown;
    /** Classes this agent changed, as "name@loader", so detach retransforms just those. */
    private final Set<String> instrumented = new HashSet<String>();

    private Agent(Options o, Instrumentation inst, Service s, long serviceStartNanos, ClassLoader classPathLoader) {
        this.options = o;
        this.classPathLoader = classPathLoader;
        this.inst = inst;
        this.service = s;
        this.serviceStartNanos = serviceStartNanos;
        this.transformer = new Transformer(this, o.jdk, o.objectInit);
        long after = Adapt.threshold();
        this.adapt = after > 0 ? new Adapt(inst, after, Long.getLong("heapledger.adapt.interval", 10L), o.verbose) : null;
        this.local = adapt == null ? LocalCache.offered(s.helloMessages(), s) : null;
    }

    public static void premain(String args, Instrumentation inst) {
        start(args, inst, false);
    }

    public static void agentmain(String args, Instrumentation inst) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (RuntimeException e) {
            warn("bad agent options: " + e.getMessage() + "; the agent is not started");
            return;
        }
        if (o.detach) {
            detach(o);
        } else {
            start(args, inst, true);
        }
    }

    /** Never throws: a failure to start leaves the program running uninstrumented. */
    private static void start(String args, Instrumentation inst, boolean attach) {
        Options o = null;
        Report report = null;
        Service s = null;
        try {
            o = Options.parse(args);
            report = new Report(o.status);
            synchronized (Agent.class) {
                if (active != null) {
                    report.line("error: heapledger is already attached to this JVM (detach it first)");
                    return;
                }
                if (o.bin == null) throw new IllegalArgumentException("no bin= option: the heapledger binary to run");
                if (o.snapshotDir != null) System.setProperty("heapledger.snapshot.dir", o.snapshotDir);
                List<String> extra = new ArrayList<String>();
                // Touching Ledger starts the runtime, which reads its settings once: only after
                // the service's config lines became properties, unless an earlier attach did.
                String earlier = startedBefore ? Ledger.definedTable() : "";
                if (!earlier.isEmpty()) {
                    // Attached again after a detach: continue the table so site IDs stay unique.
                    File t = File.createTempFile("heapledger-table-", ".tsv");
                    t.deleteOnExit();
                    writeFile(t, "# heapledger table 1\n" + earlier);
                    extra.add("--table");
                    extra.add(t.getPath());
                }
                ClassLoader cpLoader = attach ? null : classPathArgs(o, extra);
                long t0 = System.nanoTime();
                s = Service.start(o, extra);
                applyConfig(s.accountLines());
                if (o.jdk && !hasModules()) {
                    report.line("warning: --jdk needs Java 9 or later; JDK classes are not rewritten");
                    warn("--jdk needs Java 9 or later; JDK classes are not rewritten");
                    o.jdk = false;
                }
                int[] hookSites = o.objectInit ? hookSites(s.accountLines()) : null;
                Agent a = new Agent(o, inst, s, System.nanoTime() - t0, cpLoader);
                if (!startedBefore && s.accountLines().contains("config\tbudget.")) {
                    // Budgets name accounts, and the runtime resolves them when it starts, before
                    // any line reaches it through defineTable: it reads them from a table file.
                    File t = File.createTempFile("heapledger-accounts-", ".tsv");
                    t.deleteOnExit();
                    writeFile(t, "# heapledger table 1\n" + s.accountLines());
                    String old = System.getProperty("heapledger.table");
                    System.setProperty("heapledger.table", old == null || old.isEmpty() ? t.getPath() : old + File.pathSeparator + t.getPath());
                }
                startedBefore = true;
                Ledger.defineTable(s.accountLines());
                // The runtime's own work will run rewritten code: liveness must start now, on
                // the JDK's unmodified code, and never track that work (SelfCounted).
                if (o.jdk || o.objectInit) SelfCounted.enable();
                System.setProperty("heapledger.agent.service.pid", String.valueOf(s.pid));
                a.preload();
                if ((o.jdk || o.objectInit) && hasModules()) a.readBootUnnamed();
                if (o.objectInit) ObjectHook.engage(hookSites[0], hookSites[1]);
                if (a.adapt != null) a.adapt.start();
                inst.addTransformer(a.transformer, true);
                active = a;
                Runtime.getRuntime().addShutdownHook(new Thread("heapledger-agent-exit") {
                    @Override
                    public void run() {
                        Agent.ownThread();
                        a.atExit();
                    }
                });
                if (attach) {
                    int n = a.retransformLoaded(report);
                    a.checkObjectHook(report);
                    report.line("attached: transform service pid " + s.pid + "; " + n + " loaded classes instrumented");
                } else if (o.jdk) {
                    // -javaagent: the JDK classes loaded before premain. Lines go to standard
                    // error; the first 20 not-modifiable ones unless verbose, then a count.
                    final int[] shown = {0, 0};
                    Report r = new Report(null) {
                        @Override
                        void line(String l) {
                            if (l.startsWith("not modifiable") && !a.options.verbose && ++shown[0] > 20) {
                                shown[1]++;
                                return;
                            }
                            warn(l);
                        }
                    };
                    int n = a.retransformLoaded(r);
                    if (shown[1] > 0) warn("... and " + shown[1] + " more classes not modifiable (all with --verbose)");
                    warn("--jdk: " + n + " loaded classes instrumented by retransformation");
                    a.checkObjectHook(r);
                } else if (o.objectInit) {
                    Report r = new Report(null) {
                        @Override
                        void line(String l) {
                            warn(l);
                        }
                    };
                    boolean paused = ObjectHook.pause();
                    try {
                        for (String why : a.retransform(Collections.<Class<?>>singletonList(Object.class))) r.line("not retransformed: " + why);
                    } finally {
                        ObjectHook.resume(paused);
                    }
                    a.checkObjectHook(r);
                }
            }
        } catch (Throwable e) {
            if (s != null && (active == null || active.service != s)) s.close(); // it ends with its input
            String msg = "cannot start: " + e.getMessage() + "; the program runs without heapledger";
            if (report != null) report.line("error: " + msg); // warns too when nobody reads the report
            else warn(msg);
        } finally {
            if (report != null) report.close();
        }
    }

    /**
     * --object-init: the site IDs the service reserved for the hook, from the hello's line
     * "config object.init.sites FIRST:N" (rewrite/transformsvc). Read here, not through the
     * system property applyConfig sets: an attach after a detach gets a new range, and the
     * property keeps the first.
     */
    private static int[] hookSites(String tableLines) {
        for (String line : tableLines.split("\n")) {
            String[] f = line.split("\t", 3);
            if (f.length == 3 && f[0].equals("config") && f[1].equals("object.init.sites")) {
                String[] r = f[2].split(":");
                if (r.length == 2) return new int[] {Integer.parseInt(r[0]), Integer.parseInt(r[1])};
            }
        }
        throw new IllegalStateException("--object-init: the transform service reserved no sites for the hook (an older heapledger binary?)");
    }

    /**
     * --object-init: Object's constructor is hooked only if the service rewrote it and the JVM
     * took the new code; otherwise the hook stays off and the report says why.
     */
    private void checkObjectHook(Report report) {
        if (!options.objectInit) return;
        boolean hooked;
        synchronized (this) {
            hooked = instrumented.contains("java/lang/Object@" + loaderName(null));
        }
        if (hooked) {
            // Said where someone asked (attach's report, --stats, --verbose): a program's own
            // standard error stays quiet when all went well.
            if (report.path != null || options.stats || options.verbose) {
                report.line("note: --object-init: java.lang.Object's constructor is hooked; objects constructed anywhere are counted in the init sites");
            }
        } else {
            ObjectHook.disengage();
            report.line("warning: --object-init: java.lang.Object could not be hooked (see the lines above); objects are counted at rewritten sites only");
        }
    }

    /**
     * The pass's launch settings (--liveness, --snapshot-interval, ...) come as "config KEY VALUE"
     * table lines; offline they travel in the rewritten jar's table. The runtime reads each as the
     * property heapledger.KEY, which the program's own -D options override.
     */
    private static void applyConfig(String tableLines) {
        for (String line : tableLines.split("\n")) {
            String[] f = line.split("\t", 3);
            if (f.length == 3 && f[0].equals("config") && System.getProperty("heapledger." + f[1]) == null) {
                System.setProperty("heapledger." + f[1], f[2]);
            }
        }
    }

    /**
     * Runs everything the transformer path uses once, so its classes are loaded here and not
     * while a class is being loaded (no ClassCircularityError, no lock taken in the middle).
     */
    private void preload() {
        BUSY.get();
        ObjectHook.resume(ObjectHook.pause()); // the transformer pauses the hook, engaged or not
        byte[] tiny = new byte[0];
        Service.Pending p = new Service.Pending();
        synchronized (p) {
            p.done = true;
            p.table = "";
            p.messages = "";
        }
        new String(tiny, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
        loaderName(ClassLoader.getSystemClassLoader());
        if (local != null) local.preload();
        record(0, p, "", "");
        synchronized (this) {
            sent = changed = unchanged = failed = skippedMethods = cached = 0;
            instrumented.clear();
        }
        Arrays.sort(new long[2]);
    }

    static void ownThread() {
        BUSY.get()[0] = true;
    }

    /**
     * Gives the service the class path, so that it rewrites the system class loader's classes
     * reading the others as offline rewriting reads its input (docs/agent.md, "The class path as
     * the input"), and returns that loader; null when the class path may not be what the loader
     * searches, or the service must read nothing: a custom system loader, modules on a module
     * path, jars appended to the boot class path (found before the class path), --jdk (the
     * JDK's classes are rewritten too, which the pass assumes they are not), and an attach,
     * where classes loaded before may be left as they are (not retransformable).
     */
    private static ClassLoader classPathArgs(Options o, List<String> extra) {
        List<String> jvmOptions = jvmOptions();
        if (o.jdk || System.getProperty("java.system.class.loader") != null || !isEmpty(System.getProperty("jdk.module.path"))
                || otherAgents(jvmOptions) || loadersAboveHoldJars(jvmOptions)) {
            return null;
        }
        String cp = System.getProperty("java.class.path");
        ClassLoader sys = ClassLoader.getSystemClassLoader();
        if (isEmpty(cp) || sys == null) return null;
        // Made absolute as the loader makes them, against user.dir (which -Duser.dir may set
        // apart from the working directory the service inherits); an empty entry is user.dir.
        StringBuilder abs = new StringBuilder();
        for (String e : cp.split(File.pathSeparator, -1)) {
            if (abs.length() > 0) abs.append(File.pathSeparatorChar);
            abs.append(new File(e.isEmpty() ? "." : e).getAbsolutePath());
        }
        if (abs.length() > MAX_ARG_CLASS_PATH) {
            // One argument of a command is bounded (128 KiB on Linux): a longer class path
            // goes through a file. One that cannot be written costs the input, not the agent.
            try {
                File f = File.createTempFile("heapledger-class-path-", ".txt");
                f.deleteOnExit();
                writeFile(f, abs.toString());
                extra.add("--class-path-file");
                extra.add(f.getPath());
            } catch (IOException e) {
                return null;
            }
        } else {
            extra.add("--class-path");
            extra.add(abs.toString());
        }
        extra.add("--class-path-loader");
        extra.add(loaderName(sys));
        return sys;
    }

    /**
     * Whether a loader the system loader asks first holds jars besides the JDK's and this
     * agent's: -Xbootclasspath/a or another agent's Boot-Class-Path (and Java 8's extension
     * directories). Their classes are found before the class path's. The JVM removes
     * -Xbootclasspath/a's property from the public ones, so they are seen by the manifests
     * those loaders find (the JDK's runtime image has none): a jar without a manifest, or a
     * directory, there is not seen (docs/agent.md). Finding them opens the boot class path's
     * jars, a few milliseconds, so on Java 9 or later on Linux it is done only when the JVM's
     * options (jvmOptions) name -Xbootclasspath/a or an argument file.
     */
    private static boolean loadersAboveHoldJars(List<String> jvmOptions) {
        try {
            if (hasModules() && jvmOptions != null && !mayAppendBootPath(jvmOptions)) return false;
            ClassLoader sys = ClassLoader.getSystemClassLoader();
            URL self = Agent.class.getResource("Agent.class");
            String own = self == null ? null : jarOf(self.toString());
            String home = new File(System.getProperty("java.home", "/nonexistent")).getCanonicalFile().toURI().toString();
            Enumeration<URL> found = sys.getParent().getResources("META-INF/MANIFEST.MF");
            while (found.hasMoreElements()) {
                String jar = jarOf(found.nextElement().toString());
                if (jar == null || !jar.equals(own) && !jar.startsWith(home)) return true;
            }
            return false;
        } catch (Throwable e) {
            return true; // not known: the class path is not given
        }
    }

    /** The longest class path given to the service as an argument; a longer one goes in a file. */
    private static final int MAX_ARG_CLASS_PATH = 32 * 1024;

    /**
     * The JVM's command line (/proc/self/cmdline, Linux) followed by the words of
     * JAVA_TOOL_OPTIONS and JDK_JAVA_OPTIONS; null when the command line cannot be read.
     */
    private static List<String> jvmOptions() {
        byte[] cmd;
        try {
            cmd = java.nio.file.Files.readAllBytes(new File("/proc/self/cmdline").toPath());
        } catch (Throwable e) {
            return null;
        }
        List<String> out = new ArrayList<String>(Arrays.asList(new String(cmd, StandardCharsets.UTF_8).split("\0")));
        for (String v : new String[] {System.getenv("JAVA_TOOL_OPTIONS"), System.getenv("JDK_JAVA_OPTIONS")}) {
            if (v != null) out.addAll(Arrays.asList(v.trim().split("\\s+")));
        }
        return out;
    }

    /**
     * Whether the options name an agent besides this one that may change the classes it sees
     * (a -javaagent, or a native -agentpath or -agentlib other than the debugger's jdwp): the
     * JVM runs such an agent's transformer before this one's, so the class path's bytes need
     * not be the classes defined. Not seen off Linux (docs/agent.md).
     */
    private static boolean otherAgents(List<String> jvmOptions) {
        if (jvmOptions == null) return false;
        int javaAgents = 0;
        for (String a : jvmOptions) {
            if (a.startsWith("-javaagent:")) javaAgents++;
            if (a.startsWith("-agentpath:") || a.startsWith("-agentlib:") && !a.startsWith("-agentlib:jdwp")) return true;
        }
        return javaAgents > 1;
    }

    /**
     * Whether the options may append to the boot class path: -Xbootclasspath/a or an
     * @argument file (another agent's Boot-Class-Path: otherAgents has refused the class
     * path by then).
     */
    private static boolean mayAppendBootPath(List<String> jvmOptions) {
        for (String a : jvmOptions) {
            if (a.startsWith("-Xbootclasspath/a") || a.startsWith("@")) return true;
        }
        return false;
    }

    /** "file:/a/b.jar" of "jar:file:/a/b.jar!/x", or null when the URL is not into a jar. */
    private static String jarOf(String url) {
        int bang = url.indexOf("!/");
        return url.startsWith("jar:") && bang > 0 ? url.substring(4, bang) : null;
    }

    private static boolean isEmpty(String s) {
        return s == null || s.isEmpty();
    }

    static void warn(String msg) {
        System.err.println("heapledger agent: " + msg);
    }

    /**
     * One class through the service. redefined is the class when the JVM retransforms it: with
     * --adapt, a class due for re-instrumentation goes with its edge profile (Adapt).
     */
    byte[] transform(ClassLoader loader, String className, Class<?> redefined, byte[] classFile) {
        Adapt ad = adapt;
        String profile = ad == null || redefined == null ? null : ad.profileFor(redefined);
        if (profile == null && !service.usable()) return null;
        long t0 = System.nanoTime();
        String ln = loaderName(loader);
        if (profile == null && local != null) {
            Service.Pending p = local.answer(className, classFile, loader != null && loader == classPathLoader);
            if (p != null) {
                if (!p.table.isEmpty()) Ledger.defineTable(p.table);
                record(System.nanoTime() - t0, p, className, ln);
                return p.status == Service.CHANGED ? p.bytes : null;
            }
        }
        Service.Pending p = service.usable() ? service.transform(className, ln, profile, classFile) : null;
        if (p != null) {
            if (!p.table.isEmpty()) {
                Ledger.defineTable(p.table);
                if (ad != null) ad.noteTable(p.table);
            }
            record(System.nanoTime() - t0, p, className, ln);
        }
        if (profile != null) return adapted(ad, p, className, ln);
        byte[] out = p != null && p.status == Service.CHANGED ? p.bytes : null;
        if (ad != null) ad.keep(className, ln, out);
        return out;
    }

    /**
     * The bytes a class due for re-instrumentation gets: the new ones, or on any failure the
     * ones it has (retransformation starts from the class file as loaded, so returning nothing
     * would take its counters away).
     */
    private static byte[] adapted(Adapt ad, Service.Pending p, String className, String loader) {
        if (p != null && p.status == Service.CHANGED) {
            ad.answered(null);
            ad.forget(className, loader);
            return p.bytes;
        }
        ad.answered(p == null ? "the transform service is gone" : p.status == Service.FAILED ? p.messages.trim() : "the service left it unchanged");
        return ad.current(className, loader);
    }

    /**
     * Counts one answer. Messages are printed after the lock is released: a thread holding
     * System.err's lock may be loading a class and waiting for this lock.
     */
    private void record(long nanos, Service.Pending p, String className, String loader) {
        List<String> print = null;
        synchronized (this) {
            if (sent == latencies.length) latencies = Arrays.copyOf(latencies, sent * 2);
            latencies[sent++] = nanos;
            if (p.cached) cached++;
            if (p.status == Service.CHANGED) {
                changed++;
                instrumented.add(className + "@" + loader);
            } else if (p.status == Service.FAILED) {
                failed++;
                if (firstFailure == null) firstFailure = p.messages;
                if (options.verbose || failuresShown < 5) print = add(print, "class loads unmodified: " + p.messages.trim());
                failuresShown++;
            } else {
                unchanged++;
            }
            if (!p.messages.isEmpty() && p.status != Service.FAILED) {
                for (String line : p.messages.split("\n")) {
                    if (line.startsWith("skipped: ")) skippedMethods++;
                    if (options.verbose || line.startsWith("warning: ")) print = add(print, line);
                }
            }
        }
        if (print != null) {
            for (String line : print) warn(line);
        }
    }

    private static List<String> add(List<String> l, String s) {
        if (l == null) l = new ArrayList<String>();
        l.add(s);
        return l;
    }

    void internalError(String className, Throwable e) {
        service.fail("internal error (" + e + ")", className);
    }

    static String loaderName(ClassLoader l) {
        if (l == null) return "bootstrap"; // --jdk: classes of the boot loader
        return l.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(l));
    }

    /**
     * Attach: sends the classes already loaded through the transformer. Classes the JVM cannot
     * retransform, or refused, are reported by name, not hidden.
     */
    private int retransformLoaded(Report report) {
        boolean paused = ObjectHook.pause();
        Acct muted = options.jdk ? Ledger.mute() : null;
        try {
            return retransformLoaded0(report);
        } finally {
            if (options.jdk) Ledger.unmute(muted);
            ObjectHook.resume(paused);
        }
    }

    private int retransformLoaded0(Report report) {
        List<Class<?>> todo = new ArrayList<Class<?>>();
        List<String> unmodifiable = new ArrayList<String>();
        int hidden = 0;
        int excluded = 0;
        List<String> hiddenNames = new ArrayList<String>();
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (!transformer.wants(c)) {
                if (options.jdk && !c.isArray() && !c.isPrimitive() && transformer.isJdk(c)) excluded++;
                continue;
            }
            if (inst.isModifiableClass(c)) todo.add(c);
            else if (isHidden(c)) {
                hidden++;
                if (options.verbose) hiddenNames.add(c.getName());
            } else {
                unmodifiable.add(c.getName());
            }
        }
        if (options.jdk) {
            report.line("note: --jdk: " + excluded + " loaded JDK classes are excluded from rewriting (the runtime's own path, "
                    + "class loading, lambdas: docs/agent.md)");
        }
        if (hidden > 0) {
            report.line("note: " + hidden + " hidden classes (lambda and proxy classes the JVM spun) are not modifiable; "
                    + "the code of lambdas lives in their host classes, which are rewritten" + (options.verbose ? ":" : " (names with --verbose)"));
            for (String name : hiddenNames) report.line("  hidden: " + name);
        }
        int before;
        synchronized (this) {
            before = changed;
        }
        List<String> refused = retransform(todo);
        for (String name : unmodifiable) report.line("not modifiable (the JVM cannot retransform it): " + name);
        for (String why : refused) report.line("not retransformed: " + why);
        synchronized (this) {
            return changed - before;
        }
    }

    /**
     * --jdk: rewritten JDK classes call heapledger.rt, which the bootstrap loader defines in its
     * unnamed module; every JDK module of the boot layer must read that module, or the first
     * call from java.base fails with IllegalAccessError. Java 8 has no modules and no such
     * need, but is not supported by --jdk (docs/agent.md).
     */
    private void readBootUnnamed() throws Exception {
        if (Ledger.class.getClassLoader() != null) {
            throw new IllegalStateException("--jdk: the runtime is not on the bootstrap class path");
        }
        Class<?> moduleClass;
        try {
            moduleClass = Class.forName("java.lang.Module");
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("--jdk needs Java 9 or later");
        }
        Object unnamed = Class.class.getMethod("getModule").invoke(Ledger.class);
        Class<?> layerClass = Class.forName("java.lang.ModuleLayer");
        Object boot = layerClass.getMethod("boot").invoke(null);
        Method redefine = Instrumentation.class.getMethod("redefineModule", moduleClass, Set.class, Map.class, Map.class, Set.class, Map.class);
        Method loaderOf = moduleClass.getMethod("getClassLoader");
        ClassLoader platform = ClassLoader.getSystemClassLoader().getParent();
        for (Object m : (Set<?>) layerClass.getMethod("modules").invoke(boot)) {
            ClassLoader l = (ClassLoader) loaderOf.invoke(m);
            if (l != null && l != platform) continue;
            redefine.invoke(inst, m, Collections.singleton(unnamed), Collections.emptyMap(), Collections.emptyMap(),
                    Collections.emptySet(), Collections.emptyMap());
        }
    }

    private static boolean hasModules() {
        try {
            Class.forName("java.lang.Module");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** Hidden classes (Java 15+) cannot be retransformed; Java 8 has none of them. */
    private static boolean isHidden(Class<?> c) {
        try {
            return (Boolean) Class.class.getMethod("isHidden").invoke(c);
        } catch (Throwable e) {
            return false;
        }
    }

    /**
     * Retransforms in batches; a batch the JVM refuses is retried class by class. Returns what
     * was refused, one line per class with the reason.
     */
    private List<String> retransform(List<Class<?>> classes) {
        List<String> refused = new ArrayList<String>();
        final int batch = 64;
        for (int i = 0; i < classes.size(); i += batch) {
            List<Class<?>> part = classes.subList(i, Math.min(classes.size(), i + batch));
            try {
                inst.retransformClasses(part.toArray(new Class<?>[0]));
            } catch (Throwable e) {
                for (Class<?> c : part) {
                    try {
                        inst.retransformClasses(c);
                    } catch (Throwable e1) {
                        refused.add(c.getName() + ": " + e1);
                    }
                }
            }
        }
        return refused;
    }

    /**
     * Detach: removes the transformer, restores the original bytecode of every class it changed
     * (retransformation without it starts again from the class file the JVM loaded), writes a
     * last snapshot and ends the service. Methods running at this moment finish in their
     * instrumented version; every later call runs the original.
     */
    private static void detach(Options o) {
        Report report = new Report(o.status);
        Acct muted = null;
        boolean paused = ObjectHook.pause();
        try {
            synchronized (Agent.class) {
                Agent a = active;
                if (a == null) {
                    report.line("error: heapledger is not attached to this JVM");
                    return;
                }
                // After an attach with --jdk the JDK classes used below are rewritten: what
                // detach allocates on the attach thread is not the program's.
                if (a.options.jdk) muted = Ledger.mute();
                // The hook stops before Object gets its original code back below.
                if (a.options.objectInit) ObjectHook.disengage();
                if (a.adapt != null) a.adapt.stop();
                a.inst.removeTransformer(a.transformer);
                a.service.close();
                Set<String> names;
                synchronized (a) {
                    names = new HashSet<String>(a.instrumented);
                }
                List<Class<?>> todo = new ArrayList<Class<?>>();
                for (Class<?> c : a.inst.getAllLoadedClasses()) {
                    if (a.transformer.wants(c) && names.contains(c.getName().replace('.', '/') + "@" + loaderName(c.getClassLoader()))) {
                        todo.add(c);
                    }
                }
                for (String why : a.retransform(todo)) report.line("not restored: " + why);
                active = null;
                String snap = Ledger.snapshot("detach");
                report.line("detached: " + todo.size() + " classes restored; last snapshot " + (snap == null ? "not written (see the program's messages)" : new File(snap).getAbsoluteFile().toPath().normalize()));
                if (a.options.stats || o.stats) report.line(a.stats());
            }
        } catch (Throwable e) {
            report.line("error: detach failed: " + e);
        } finally {
            report.close();
            if (muted != null) Ledger.unmute(muted);
            ObjectHook.resume(paused);
        }
    }

    private void atExit() {
        if (active != this) return; // detached: reported then
        String s = stats();
        String failures;
        synchronized (this) {
            failures = failed == 0 ? null : failed + " classes could not be instrumented (first: " + firstFailure.trim() + ")";
        }
        if (options.stats || options.verbose) warn(s);
        else if (failures != null) warn(failures);
        endService();
    }

    /**
     * Ends the transform service once the exit snapshot is written (it may load classes until
     * then; a class loaded after it counts nowhere), so that the thread reading the service
     * does not hold the JVM's exit (Service.end). Both waits are bounded; past a bound the
     * service ends with the JVM, as it always did, and the exit waits those 300 ms.
     */
    private void endService() {
        try {
            Ledger.awaitExitSnapshot(SNAPSHOT_WAIT_MILLIS);
        } catch (InterruptedException e) {
            return;
        }
        if (adapt != null) adapt.stop();
        // Sent without a cache to read too: the service counts its classes as known only once
        // told, when it offered one (rewrite/transformsvc ClassesKnown). Not waited for: the
        // service answers it before its input ends.
        service.tell(local == null ? "names\n" : local.namesRequest());
        service.end(SERVICE_END_MILLIS);
    }

    /**
     * The counts are copied under the lock and formatted outside it: formatting may load
     * classes (java.util.Formatter), and a thread loading a class in the transformer waits for
     * this lock in record(), which would never be released (seen with --jdk at exit).
     */
    String stats() {
        long[] l;
        int sent, changed, unchanged, failed, skippedMethods, cached;
        synchronized (this) {
            cached = this.cached;
            sent = this.sent;
            changed = this.changed;
            unchanged = this.unchanged;
            failed = this.failed;
            skippedMethods = this.skippedMethods;
            l = Arrays.copyOf(latencies, sent);
        }
        Arrays.sort(l);
        // The total is what class loading waited for the service in all (threads that load
        // in parallel each count their own wait): on a program that loads its classes on one
        // thread, what the agent adds to its start-up.
        long total = 0;
        for (long x : l) total += x;
        String lat = sent == 0 ? "no classes sent"
                : String.format("transform latency per class: median %.2f ms, p99 %.2f ms, max %.2f ms, total %.0f ms",
                        l[(sent - 1) / 2] / 1e6, l[(int) Math.ceil(sent * 0.99) - 1] / 1e6, l[sent - 1] / 1e6, total / 1e6);
        int inJvm = local == null ? 0 : local.answered();
        return String.format("%d classes sent, %d instrumented, %d unchanged, %d failed, %d methods skipped, %d answered from the transform cache (%d read by the agent itself); %s; service start %.1f ms; agent up %.0f ms",
                sent, changed, unchanged, failed, skippedMethods, cached, inJvm, lat, serviceStartNanos / 1e6, (System.nanoTime() - started) / 1e6);
    }

    private static void writeFile(File f, String text) throws IOException {
        Writer w = new OutputStreamWriter(new FileOutputStream(f), StandardCharsets.UTF_8);
        try {
            w.write(text);
        } finally {
            w.close();
        }
    }

    /** Lines for the heapledger command that attached or detached us (the status= file). */
    static class Report {
        private final String path;
        private final StringBuilder text = new StringBuilder();

        Report(String path) {
            this.path = path;
        }

        void line(String s) {
            text.append(s).append('\n');
            if (path == null && s.startsWith("error: ")) warn(s.substring(7));
        }

        void close() {
            if (path == null) return;
            try {
                writeFile(new File(path), text.toString());
            } catch (Throwable e) {
                warn("cannot write the status file " + path + ": " + e);
            }
        }
    }
}
