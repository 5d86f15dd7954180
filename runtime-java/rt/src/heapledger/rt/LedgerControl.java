package heapledger.rt;

import java.io.File;

/**
 * The JMX operations and attributes of {@link LedgerControlMBean}, and their registration.
 *
 * <p>Creating the platform MBean server costs about 150 ms of CPU (it registers every platform
 * MXBean), too much for the many programs that never use JMX. So by default (heapledger.jmx /
 * HEAPLEDGER_JMX / rewrite-time "jmx" = auto) the runtime creates nothing: a daemon thread
 * looks once a second for a platform server someone else made — the JVM's management agent
 * (-Dcom.sun.management.jmxremote, jcmd ManagementAgent.start, JConsole or VisualVM attaching),
 * or the program itself — and registers into it. "on" creates the server at start-up (on that
 * thread, never the program's), "off" leaves JMX alone. docs/runtime.md quotes the costs.
 *
 * <p>Calls arrive on the JMX connector's threads (or the program's, in process): each mutes the
 * thread so JDK classes rewritten with --jdk do not charge the runtime's work to the program.
 * Failures go back to the caller as IllegalStateException with the reason; nothing here runs
 * on the program's behalf, so nothing here can throw into it.
 */
public final class LedgerControl implements LedgerControlMBean {
    /** How often auto mode looks for a platform MBean server. */
    static final long POLL_MILLIS = 1000;

    private static int dumps;

    LedgerControl() {}

    /** Called once from the runtime's start-up; returns at once. */
    static void start() {
        String mode = Snapshots.setting("heapledger.jmx", "HEAPLEDGER_JMX", Config.get("jmx", "auto"));
        if (mode.equals("off")) return;
        if (!mode.equals("on") && !mode.equals("auto")) {
            Snapshots.warn("unknown heapledger.jmx '" + mode + "' (on, auto or off); using auto");
            mode = "auto";
        }
        // Registration loads javax.management; a separate class keeps those references out of
        // this one, which start-up loads even when JMX is off.
        Thread t = new Registrar(mode.equals("on"));
        t.setDaemon(true);
        t.start();
    }

    /** Waits for (or, eagerly, creates) the platform MBean server and registers the runtime. */
    static final class Registrar extends Thread {
        private final boolean eager;

        Registrar(boolean eager) {
            super("heapledger-jmx"); // the prefix keeps its JDK allocations out of the counts (Quiet)
            this.eager = eager;
        }

        @Override
        public void run() {
            try {
                if (!eager) {
                    // Sleep before the first look: a program that ends within the interval
                    // never loads javax.management for us. A server made by -Dcom.sun.management
                    // .jmxremote at launch is found a second late, which no one can notice.
                    do {
                        Thread.sleep(POLL_MILLIS);
                    } while (!platformServerExists());
                }
                javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
                server.registerMBean(new LedgerControl(), new javax.management.ObjectName(NAME));
            } catch (InterruptedException e) {
                return;
            } catch (javax.management.InstanceAlreadyExistsException e) {
                // Two runtimes in one JVM (one embedded with --embed-runtime, say): the first answers.
                Snapshots.warn(NAME + " is already registered by another heapledger runtime in this JVM; its JMX operations answer for that one");
            } catch (Throwable e) {
                Snapshots.warn("the JMX operations (" + NAME + ") are not available: " + e);
            }
        }

        /**
         * Whether the platform MBean server exists, without creating it: ManagementFactory
         * makes it through MBeanServerFactory, which lists every server it made; the platform
         * one is the one holding the platform MXBeans (registered right after it is made, so a
         * server caught in between is simply found on the next look).
         */
        private static boolean platformServerExists() throws javax.management.MalformedObjectNameException {
            javax.management.ObjectName runtime = new javax.management.ObjectName(java.lang.management.ManagementFactory.RUNTIME_MXBEAN_NAME);
            for (javax.management.MBeanServer s : javax.management.MBeanServerFactory.findMBeanServer(null)) {
                if (s.isRegistered(runtime)) return true;
            }
            return false;
        }
    }

    @Override
    public String snapshot() {
        String f = Ledger.snapshot("demand"); // mutes the thread itself
        if (f == null) throw new IllegalStateException("heapledger: " + Snapshots.lastError());
        return absolute(f);
    }

    @Override
    public String heapDump(String path) {
        Acct prev = Ledger.mute();
        try {
            String p;
            if (path == null || path.trim().isEmpty()) {
                p = nextDumpPath();
            } else {
                File f = new File(path);
                p = f.isAbsolute() ? path : new File(Snapshots.dir(), path).getPath();
                // HotSpot refuses an existing file too; this says so plainly on every JVM.
                if (new File(p).exists()) throw new IllegalStateException("heapledger: " + p + " exists; a heap dump never overwrites a file");
            }
            try {
                return absolute(Snapshots.dumpHeap(p));
            } catch (IllegalStateException e) {
                throw new IllegalStateException("heapledger: " + e.getMessage());
            }
        } finally {
            Ledger.unmute(prev);
        }
    }

    /** heapledger-PROGRAM-PID-dump-N.hprof in the snapshot directory, the first N not taken. */
    private static synchronized String nextDumpPath() {
        String p;
        do {
            p = Snapshots.dumpPath("dump-" + ++dumps);
        } while (new File(p).exists());
        return p;
    }

    @Override
    public String getLiveness() {
        Acct prev = Ledger.mute();
        try {
            return Live.describe();
        } finally {
            Ledger.unmute(prev);
        }
    }

    @Override
    public String getSnapshotDirectory() {
        Acct prev = Ledger.mute();
        try {
            return absolute(Snapshots.dir());
        } finally {
            Ledger.unmute(prev);
        }
    }

    @Override
    public String getSnapshotFormat() {
        return Snapshots.format();
    }

    @Override
    public double getSnapshotInterval() {
        return Snapshots.intervalSeconds();
    }

    @Override
    public long getSnapshotsWritten() {
        return Snapshots.written();
    }

    @Override
    public String getLastSnapshot() {
        Acct prev = Ledger.mute();
        try {
            String f = Snapshots.lastWritten();
            return f == null || f.isEmpty() ? "" : absolute(f);
        } finally {
            Ledger.unmute(prev);
        }
    }

    @Override
    public long getDropped() {
        return Ledger.DROPPED.get();
    }

    @Override
    public String getFirstDrop() {
        String f = Ledger.firstDrop;
        return f == null ? "" : f;
    }

    /** The absolute form of a path the runtime wrote, without the "./" a relative directory leaves. */
    private static String absolute(String f) {
        return new File(f).getAbsoluteFile().toPath().normalize().toString();
    }
}
